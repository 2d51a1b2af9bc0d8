// SPDX-License-Identifier: MIT
//
// Built-in: check the workgroup counts of the dispatch-indirects of one
// segment, at its start, and copy them into the exec block, where
// vkCmdDispatchIndirect reads them. arg: the segment's check list; word:
// its length. Each entry: the dispatch-indirect's parameter block (ref 0
// is its count), its command index, and where its count goes in the exec
// block. A count above ACCEL_WORKGROUP_COUNT_MAX fails the submission:
// the status word takes the command's index (the first in command order),
// the bad count is kept for the message, and every count of the segment
// becomes 0, so nothing of the segment or after it runs. Runs even when
// an earlier segment failed (it then zeroes its counts).
#version 460
#define ACCEL_BINDINGS 0
#define ACCEL_NO_MAIN
#include "accel.glsl"
#include "transfer.glsl"

#define ACCEL_WORKGROUP_COUNT_MAX 65535u

layout(local_size_x = 1) in;

struct check_entry {
	uint64_t params;
	uint command;
	uint count_offset;
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer check_list {
	check_entry e[];
};

uvec3 read_count(check_entry c)
{
	accel_u32s p = accel_u32s(accel_ref_address(accel_one_ref(c.params).r));

	return uvec3(p.v[0], p.v[1], p.v[2]);
}

void main()
{
	accel_exec x = accel_exec(accel_push.exec);
	check_list list = check_list(accel_push.arg);
	bool failed = x.status != ACCEL_STATUS_OK;

	for (uint k = 0u; !failed && k < accel_push.word; k++) {
		uvec3 v = read_count(list.e[k]);

		if (any(greaterThan(v, uvec3(ACCEL_WORKGROUP_COUNT_MAX)))) {
			x.status = list.e[k].command;
			x.bad[0] = v.x;
			x.bad[1] = v.y;
			x.bad[2] = v.z;
			failed = true;
		}
	}
	for (uint k = 0u; k < accel_push.word; k++) {
		accel_u32s out_count = accel_u32s(accel_push.exec + uint64_t(list.e[k].count_offset));
		uvec3 v = failed ? uvec3(0u) : read_count(list.e[k]);

		out_count.v[0] = v.x;
		out_count.v[1] = v.y;
		out_count.v[2] = v.z;
	}
}
