// SPDX-License-Identifier: MIT
/*
 * Check suite "enum": enumeration (accel_driver_device_count/_info()) and
 * queries (accel_device_query_i64()), each answer checked against the
 * backend's own API: the cpu's against sched_getaffinity() and sysconf(),
 * vulkan's against the physical devices' properties, memory heaps and
 * queue families read here through libvulkan itself (lavapipe in CI).
 * Also the binding alignment a device asks for, enforced when a dispatch
 * is recorded (direct refs) and submitted (table slots).
 *
 * Runs on ACCEL_TEST_DEVICE (cpu, and vulkan://0 as enum-vulkan).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "test-accel.h"

#if __has_include(<vulkan/vulkan.h>)
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#define HAVE_VULKAN_H 1
#endif

/* A byte pattern: what "unchanged" compares against. */
#define JUNK 0x5a

static void junk_info(accel_device_info_t *i)
{
	memset(i, JUNK, sizeof(*i));
	i->size = sizeof(*i);
}

static bool is_junk(const accel_device_info_t *i)
{
	const unsigned char *p = (const unsigned char *)i;

	for (size_t k = sizeof(i->size); k < sizeof(*i); k++)
		if (p[k] != JUNK)
			return false;
	return i->size == sizeof(*i);
}

static uint32_t affinity_cpus(void)
{
	cpu_set_t set;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	return (uint32_t)CPU_COUNT(&set);
}

static uint64_t host_memory(void)
{
	return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGE_SIZE);
}

/* The name of the first driver that is not available here, or NULL. */
static const char *unavailable_driver(void)
{
	accel_driver_info_t d;

	for (uint32_t i = 0; i < accel_driver_count(); i++) {
		ASSERT_OK(accel_driver_info(i, &d));
		if (!d.available)
			return d.name;
	}
	return NULL;
}

/* ---- enumeration ------------------------------------------------------- */

START_TEST(test_enum_cpu_matches_affinity)
{
	accel_device_info_t i;
	accel_device_t *d = NULL;
	uint32_t n = 7;

	ASSERT_OK(accel_driver_device_count("cpu", &n));
	ck_assert_uint_eq(n, 1);
	junk_info(&i);
	ASSERT_OK(accel_driver_device_info("cpu", 0, &i));
	ck_assert_uint_eq(i.size, sizeof(i));
	ck_assert_uint_eq(i.kind, ACCEL_DEVICE_KIND_CPU);
	ck_assert_str_eq(accel_device_kind_name(i.kind), "cpu");
	ck_assert_str_eq(i.uri, "cpu://0");
	ck_assert(i.name[0] && memchr(i.name, 0, sizeof(i.name)));
	ck_assert(i.vendor[0] && memchr(i.vendor, 0, sizeof(i.vendor)));
	ck_assert_uint_eq(i.vendor_id, 0);
	ck_assert_uint_eq(i.device_id, 0);
	ck_assert_uint_eq(i.cpu_count, affinity_cpus());
	ck_assert_uint_eq(i.device_local_bytes, host_memory());
	ck_assert_uint_eq(i.host_visible_bytes, host_memory());
	ck_assert_uint_eq(i.queue_family_count, 1);
	ck_assert_uint_eq(i.queue_families[0].flags,
			  ACCEL_QUEUE_FAMILY_COMPUTE | ACCEL_QUEUE_FAMILY_TRANSFER);
	ck_assert_uint_eq(i.queue_families[0].count, affinity_cpus());
	/* unused families are zero */
	ck_assert_uint_eq(i.queue_families[1].flags, 0);
	ck_assert_uint_eq(i.queue_families[1].count, 0);
	/* the URI opens, and names itself the same */
	ASSERT_OK(accel_device_open(i.uri, NULL, &d));
	ck_assert_str_eq(accel_device_uri(d), i.uri);
	accel_device_release(d);
}
END_TEST

/* A caller built against a later, larger struct: the rest is zeroed. */
START_TEST(test_enum_info_grows_by_size)
{
	struct {
		accel_device_info_t info;
		unsigned char later[24];
	} big;
	accel_device_info_t ref = { .size = sizeof(ref) };

	memset(&big, JUNK, sizeof(big));
	big.info.size = sizeof(big);
	ASSERT_OK(accel_driver_device_info("cpu", 0, &big.info));
	ASSERT_OK(accel_driver_device_info("cpu", 0, &ref));
	ck_assert_uint_eq(big.info.size, sizeof(big)); /* the caller's */
	ck_assert_mem_eq((char *)&big.info + 4, (char *)&ref + 4, sizeof(ref) - 4);
	for (size_t k = 0; k < sizeof(big.later); k++)
		ck_assert_uint_eq(big.later[k], 0);
}
END_TEST

START_TEST(test_enum_errors)
{
	const char *off = unavailable_driver();
	accel_device_info_t i;
	uint32_t n = 7;

	ASSERT_ERRNO(accel_driver_device_count(NULL, &n), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_driver_device_count: driver is NULL");
	ASSERT_ERRNO(accel_driver_device_count("cpu", NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("count is NULL");
	ASSERT_ERRNO(accel_driver_device_count("gpu", &n), ENOENT);
	ASSERT_MESSAGE_CONTAINS("no driver named \"gpu\"; the drivers are cpu, vulkan, cuda and hip");
	ASSERT_ERRNO(accel_driver_device_count("", &n), ENOENT);
	ASSERT_ERRNO(accel_driver_device_count("cpu://", &n), ENOENT);
	ck_assert_uint_eq(n, 7);

	/*
	 * A size no struct grows to: refused before anything is written
	 * (it zeroed that many bytes past the struct; an outside test).
	 */
	junk_info(&i);
	i.size = UINT32_MAX;
	ASSERT_ERRNO(accel_driver_device_info("cpu", 0, &i), E2BIG);
	ASSERT_MESSAGE_CONTAINS("above ACCEL_OPTIONS_SIZE_MAX");
	i.size = ACCEL_OPTIONS_SIZE_MAX + 1;
	ASSERT_ERRNO(accel_driver_device_info("cpu", 0, &i), E2BIG);
	i.size = sizeof(i);
	ck_assert(is_junk(&i));

	junk_info(&i);
	ASSERT_ERRNO(accel_driver_device_info("cpu", 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_driver_device_info: info is NULL");
	ASSERT_ERRNO(accel_driver_device_info(NULL, 0, &i), EINVAL);
	ASSERT_ERRNO(accel_driver_device_info("gpu", 0, &i), ENOENT);
	ck_assert(is_junk(&i));
	ASSERT_ERRNO(accel_driver_device_info("cpu", 1, &i), ERANGE);
	ASSERT_MESSAGE_CONTAINS("\"cpu\" lists 1 device; index 1 is not below that");
	ASSERT_ERRNO(accel_driver_device_info("cpu", UINT32_MAX, &i), ERANGE);
	ASSERT_MESSAGE_CONTAINS("index 4294967295");
	ck_assert(is_junk(&i));
	/* a size from before the struct existed, or none set */
	for (uint32_t size = 0; size < ACCEL_DEVICE_INFO_SIZE_0_2; size += 91) {
		junk_info(&i);
		i.size = size;
		ASSERT_ERRNO(accel_driver_device_info("cpu", 0, &i), EINVAL);
		ASSERT_MESSAGE_CONTAINS("set it to sizeof(accel_device_info_t)");
		i.size = sizeof(i);
		ck_assert(is_junk(&i));
	}
	junk_info(&i);
	i.size = ACCEL_DEVICE_INFO_SIZE_0_2 - 1;
	ASSERT_ERRNO(accel_driver_device_info("cpu", 0, &i), EINVAL);
	ASSERT_MESSAGE_CONTAINS("info->size is 359");
	if (!off) {
		printf("SKIP part: every driver is available here\n");
		return;
	}
	ASSERT_ERRNO(accel_driver_device_count(off, &n), ENODEV);
	ASSERT_MESSAGE_CONTAINS("driver not available");
	ck_assert_uint_eq(n, 7);
	junk_info(&i);
	ASSERT_ERRNO(accel_driver_device_info(off, 0, &i), ENODEV);
	ASSERT_MESSAGE_CONTAINS("driver not available");
	ck_assert(is_junk(&i));
}
END_TEST

/* Every driver either lists devices that open, or says why it cannot. */
START_TEST(test_enum_every_driver)
{
	for (uint32_t k = 0; k < accel_driver_count(); k++) {
		accel_driver_info_t d;
		uint32_t n = 0;
		int err;

		ASSERT_OK(accel_driver_info(k, &d));
		err = accel_driver_device_count(d.name, &n);
		if (!d.available) {
			ASSERT_ERRNO(err, ENODEV);
			continue;
		}
		if (err == -ENODEV) /* a library that cannot start */
			continue;
		ASSERT_OK(err);
		for (uint32_t i = 0; i < n; i++) {
			accel_device_info_t info = { .size = sizeof(info) };
			char prefix[16];

			ASSERT_OK(accel_driver_device_info(d.name, i, &info));
			snprintf(prefix, sizeof(prefix), "%s://%u", d.name, i);
			ck_assert_str_eq(info.uri, prefix);
			ck_assert_uint_le(info.queue_family_count, ACCEL_DEVICE_QUEUE_FAMILY_MAX);
			ck_assert_uint_ge(info.queue_family_count, 1);
			ck_assert_uint_le(info.kind, ACCEL_DEVICE_KIND_VIRTUAL_GPU);
		}
	}
}
END_TEST

#ifdef HAVE_VULKAN_H
/* libvulkan, loaded here on its own: the reference answers. */
struct vkref {
	void *lib;
	VkInstance inst;
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkDestroyInstance destroy;
	PFN_vkGetPhysicalDeviceProperties props;
	PFN_vkGetPhysicalDeviceMemoryProperties mem;
	PFN_vkGetPhysicalDeviceQueueFamilyProperties queues;
	VkPhysicalDevice list[64];
	uint32_t count;
};

static bool vkref_open(struct vkref *v)
{
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.apiVersion = VK_API_VERSION_1_2,
	};
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	PFN_vkCreateInstance create;
	PFN_vkEnumeratePhysicalDevices enumerate;
	VkResult r;

	memset(v, 0, sizeof(*v));
	v->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!v->lib)
		return false;
	v->gipa = (PFN_vkGetInstanceProcAddr)dlsym(v->lib, "vkGetInstanceProcAddr");
	create = (PFN_vkCreateInstance)v->gipa(NULL, "vkCreateInstance");
	r = create(&ici, NULL, &v->inst);
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
		v->inst = NULL; /* a loader and no driver: no device */
		return true;
	}
	if (r != VK_SUCCESS)
		return false;
#define L(f) (PFN_##f)v->gipa(v->inst, #f)
	v->destroy = L(vkDestroyInstance);
	v->props = L(vkGetPhysicalDeviceProperties);
	v->mem = L(vkGetPhysicalDeviceMemoryProperties);
	v->queues = L(vkGetPhysicalDeviceQueueFamilyProperties);
	enumerate = L(vkEnumeratePhysicalDevices);
#undef L
	v->count = 64;
	ck_assert_int_eq(enumerate(v->inst, &v->count, v->list), VK_SUCCESS);
	return true;
}

static void vkref_close(struct vkref *v)
{
	if (v->inst)
		v->destroy(v->inst, NULL);
	/* libvulkan stays loaded: its drivers may keep threads */
}

START_TEST(test_enum_vulkan_matches_vulkan)
{
	struct vkref v;
	uint32_t n = 0;

	if (accel_driver_device_count("vulkan", &n) == -ENODEV) {
		TEST_SKIP("the vulkan driver is not available here: %s\n",
			  accel_error_message());
	}
	ck_assert(vkref_open(&v));
	ck_assert_uint_eq(n, v.count);
	for (uint32_t k = 0; k < v.count; k++) {
		accel_device_info_t i;
		VkPhysicalDeviceProperties p;
		VkPhysicalDeviceMemoryProperties m;
		VkQueueFamilyProperties q[ACCEL_DEVICE_QUEUE_FAMILY_MAX];
		uint32_t nq = ACCEL_DEVICE_QUEUE_FAMILY_MAX, visible = 0;
		uint64_t local = 0, host = 0;
		static const uint32_t kinds[] = {
			[VK_PHYSICAL_DEVICE_TYPE_OTHER] = ACCEL_DEVICE_KIND_OTHER,
			[VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU] = ACCEL_DEVICE_KIND_INTEGRATED_GPU,
			[VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU] = ACCEL_DEVICE_KIND_DISCRETE_GPU,
			[VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU] = ACCEL_DEVICE_KIND_VIRTUAL_GPU,
			[VK_PHYSICAL_DEVICE_TYPE_CPU] = ACCEL_DEVICE_KIND_CPU,
		};
		char uri[32];

		junk_info(&i);
		ASSERT_OK(accel_driver_device_info("vulkan", k, &i));
		v.props(v.list[k], &p);
		v.mem(v.list[k], &m);
		v.queues(v.list[k], &nq, q);
		snprintf(uri, sizeof(uri), "vulkan://%u", k);
		ck_assert_str_eq(i.uri, uri);
		ck_assert_str_eq(i.name, p.deviceName);
		ck_assert_uint_eq(i.vendor_id, p.vendorID);
		ck_assert_uint_eq(i.device_id, p.deviceID);
		ck_assert_uint_eq(i.kind, kinds[p.deviceType]);
		if (p.vendorID == 0x10005)
			ck_assert_str_eq(i.vendor, "Mesa");
		for (uint32_t t = 0; t < m.memoryTypeCount; t++)
			if (m.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
				visible |= 1u << m.memoryTypes[t].heapIndex;
		for (uint32_t h = 0; h < m.memoryHeapCount; h++) {
			if (m.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
				local += m.memoryHeaps[h].size;
			if (visible & (1u << h))
				host += m.memoryHeaps[h].size;
		}
		ck_assert_uint_eq(i.device_local_bytes, local);
		ck_assert_uint_eq(i.host_visible_bytes, host);
		ck_assert_uint_eq(i.cpu_count, 0);
		ck_assert_uint_eq(i.queue_family_count, nq);
		for (uint32_t f = 0; f < nq; f++) {
			ck_assert_uint_eq(i.queue_families[f].count, q[f].queueCount);
			ck_assert_uint_eq(!!(i.queue_families[f].flags & ACCEL_QUEUE_FAMILY_COMPUTE),
					  !!(q[f].queueFlags & VK_QUEUE_COMPUTE_BIT));
			ck_assert_uint_eq(!!(i.queue_families[f].flags & ACCEL_QUEUE_FAMILY_GRAPHICS),
					  !!(q[f].queueFlags & VK_QUEUE_GRAPHICS_BIT));
			ck_assert_uint_eq(!!(i.queue_families[f].flags & ACCEL_QUEUE_FAMILY_TRANSFER),
					  !!(q[f].queueFlags & (VK_QUEUE_TRANSFER_BIT |
								VK_QUEUE_COMPUTE_BIT |
								VK_QUEUE_GRAPHICS_BIT)));
		}
	}
	vkref_close(&v);
}
END_TEST
#endif

/* ---- queries -------------------------------------------------------------- */

static int64_t query(accel_device_query_t key)
{
	int64_t v = -12345;

	ASSERT_OK(accel_device_query_i64(dev, key, &v));
	return v;
}

START_TEST(test_query_every_key)
{
	const char *names[ACCEL_DEVICE_QUERY_COUNT];

	for (int k = 0; k < ACCEL_DEVICE_QUERY_COUNT; k++) {
		int64_t v = query((accel_device_query_t)k);

		names[k] = accel_device_query_name((accel_device_query_t)k);
		ck_assert_msg(names[k] && names[k][0], "key %d has no name", k);
		for (int j = 0; j < k; j++)
			ck_assert_str_ne(names[j], names[k]);
		ck_assert_msg(v >= 0, "%s is %lld", names[k], (long long)v);
	}
	for (int k = ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X;
	     k <= ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z; k++)
		ck_assert_int_ge(query((accel_device_query_t)k), 1);
	for (int k = ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X;
	     k <= ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z; k++)
		ck_assert_int_le(query((accel_device_query_t)k), ACCEL_WORKGROUP_COUNT_MAX);
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MAX_BINDINGS), ACCEL_DISPATCH_MAX_BINDINGS);
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MAX_CONSTANT_BYTES),
			 ACCEL_DISPATCH_MAX_CONSTANTS * 4);
	/* a power of two */
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT) &
			 (query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT) - 1), 0);
	ck_assert_int_le(query(ACCEL_DEVICE_QUERY_TIMESTAMPS), 1);
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_TIMESTAMPS) == 0,
			 query(ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS) == 0);
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_DISPATCH_INDIRECT), 1);
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_TRANSIENT_POOL), 1); /* accel_queue_alloca() */
	ck_assert_int_ge(query(ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES) +
			 query(ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES), 1);
	ck_assert_ptr_null(accel_device_query_name(ACCEL_DEVICE_QUERY_COUNT));
	ck_assert_ptr_null(accel_device_query_name((accel_device_query_t)-1));
	ck_assert_str_eq(accel_device_query_name(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT),
			 "min_binding_alignment");
	ck_assert_str_eq(accel_device_kind_name(99), "other");
}
END_TEST

START_TEST(test_query_errors)
{
	int64_t v = 77;

	ASSERT_ERRNO(accel_device_query_i64(NULL, ACCEL_DEVICE_QUERY_MAX_BINDINGS, &v), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_device_query_i64: device is NULL");
	ASSERT_ERRNO(accel_device_query_i64(dev, ACCEL_DEVICE_QUERY_MAX_BINDINGS, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_device_query_i64: out is NULL");
	ASSERT_ERRNO(accel_device_query_i64(dev, ACCEL_DEVICE_QUERY_COUNT, &v), ENOENT);
	ASSERT_MESSAGE_CONTAINS("key 18 is not a query key; the keys are 0 (ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X) to 17");
	ASSERT_ERRNO(accel_device_query_i64(dev, (accel_device_query_t)-1, &v), ENOENT);
	ASSERT_MESSAGE_CONTAINS("key 4294967295 is not a query key");
	ASSERT_ERRNO(accel_device_query_i64(dev, (accel_device_query_t)0x7fffffff, &v), ENOENT);
	ck_assert_int_eq(v, 77);
}
END_TEST

/* The answers that are the device's own, against its API. */
START_TEST(test_query_matches_backend)
{
	accel_scheduler_info_t si;
	int64_t ext;

	ASSERT_OK(accel_scheduler_query(accel_device_scheduler(dev), &si));
	ext = si.kind == ACCEL_SCHEDULER_KERNEL;
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_FD), ext);
	ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_SYNC_FILE), ext);
	if (test_device_is_cpu()) {
		for (int k = ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X;
		     k <= ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS; k++)
			ck_assert_int_eq(query((accel_device_query_t)k), UINT32_MAX);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X),
				 ACCEL_WORKGROUP_COUNT_MAX);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT), 1);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_TIMESTAMPS), 1);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS), 1000);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES),
				 (int64_t)host_memory());
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES),
				 (int64_t)host_memory());
		return;
	}
#ifdef HAVE_VULKAN_H
	if (strncmp(test_device_uri(), "vulkan://", 9) == 0) {
		accel_device_info_t info = { .size = sizeof(info) };
		unsigned int index = (unsigned int)atoi(accel_device_uri(dev) + 9);
		VkQueueFamilyProperties q[32];
		VkPhysicalDeviceProperties p;
		uint32_t nq = 32, family = 0;
		struct vkref v;

		ck_assert(vkref_open(&v));
		ck_assert_uint_lt(index, v.count);
		v.props(v.list[index], &p);
		v.queues(v.list[index], &nq, q);
		while (!(q[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
			family++;
		for (int k = 0; k < 3; k++) {
			int64_t count = p.limits.maxComputeWorkGroupCount[k];

			ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X + k),
					 p.limits.maxComputeWorkGroupSize[k]);
			ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X + k),
					 count < ACCEL_WORKGROUP_COUNT_MAX ? count :
					 ACCEL_WORKGROUP_COUNT_MAX);
		}
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS),
				 p.limits.maxComputeWorkGroupInvocations);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT), 4);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_TIMESTAMPS),
				 q[family].timestampValidBits > 0);
		if (q[family].timestampValidBits)
			ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS),
					 (int64_t)(p.limits.timestampPeriod * 1000.0f + 0.5f));
		ASSERT_OK(accel_driver_device_info("vulkan", index, &info));
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES),
				 (int64_t)info.device_local_bytes);
		ck_assert_int_eq(query(ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES),
				 (int64_t)info.host_visible_bytes);
		vkref_close(&v);
	}
#endif
}
END_TEST

/* Three threads listing and querying at once agree with one alone. */
struct racer {
	accel_device_info_t info;
	int64_t limits[ACCEL_DEVICE_QUERY_COUNT];
	int err;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	for (int round = 0; round < 50 && !r->err; round++) {
		uint32_t n = 0;

		r->info.size = sizeof(r->info);
		r->err = accel_driver_device_count("cpu", &n);
		if (!r->err)
			r->err = accel_driver_device_info("cpu", 0, &r->info);
		for (int k = 0; !r->err && k < ACCEL_DEVICE_QUERY_COUNT; k++)
			r->err = accel_device_query_i64(dev, (accel_device_query_t)k,
							&r->limits[k]);
		if (!r->err && strncmp(test_device_uri(), "vulkan", 6) == 0)
			r->err = accel_driver_device_count("vulkan", &n);
	}
	return NULL;
}

START_TEST(test_query_three_threads)
{
	struct racer r[3];
	pthread_t t[3];

	memset(r, 0, sizeof(r));
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(r[i].err, 0);
		ck_assert_mem_eq(&r[i].info, &r[0].info, sizeof(r[0].info));
		ck_assert_mem_eq(r[i].limits, r[0].limits, sizeof(r[0].limits));
		ck_assert_int_eq(r[i].limits[ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT],
				 query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT));
	}
}
END_TEST

/* ---- binding alignment ------------------------------------------------------ */

static accel_executable_t *exe;
static accel_buffer_t *buf;

static void align_setup(void)
{
	device_setup();
	exe = kernels();
	buf = buffer_new(256);
}

static void align_teardown(void)
{
	accel_buffer_release(buf);
	accel_executable_release(exe);
	device_teardown();
}

static int dispatch_at(accel_command_buffer_t *cb, accel_buffer_ref_t ref)
{
	uint32_t wg[3] = { 1, 1, 1 }, c = 0;

	return accel_command_buffer_dispatch(cb, exe, entry(exe, "fill_u32"),
					     wg, &c, 1, &ref, 1);
}

START_TEST(test_binding_alignment_direct)
{
	int64_t align = query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT);
	accel_command_buffer_t *cb = cb_new(0, 4);
	accel_buffer_t *sub = NULL;
	char want[160];

	/* aligned offsets record, on every device */
	ASSERT_OK(dispatch_at(cb, accel_buffer_ref_direct(buf, 0, 64)));
	ASSERT_OK(dispatch_at(cb, accel_buffer_ref_direct(buf, (uint64_t)align * 3, 64)));
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), 2);
	if (align == 1) {
		/* cpu: any offset; a kernel's pointer is its own business */
		ASSERT_OK(dispatch_at(cb, accel_buffer_ref_direct(buf, 1, 64)));
		ASSERT_OK(dispatch_at(cb, accel_buffer_ref_indirect(0, 3, 64)));
		accel_command_buffer_release(cb);
		return;
	}
	snprintf(want, sizeof(want),
		 "bindings[0]: offset 2 is not a multiple of %lld, the binding alignment of %s (ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT)",
		 (long long)align, accel_device_uri(dev));
	ASSERT_ERRNO(dispatch_at(cb, accel_buffer_ref_direct(buf, 2, 64)), EINVAL);
	ASSERT_MESSAGE_CONTAINS(want);
	for (int64_t off = 1; off < align; off++)
		ASSERT_ERRNO(dispatch_at(cb, accel_buffer_ref_direct(buf, (uint64_t)off, 8)), EINVAL);
	/* a subspan counts from its root allocation */
	ASSERT_OK(accel_buffer_subspan(buf, 2, 128, &sub));
	ASSERT_ERRNO(dispatch_at(cb, accel_buffer_ref_direct(sub, 0, 64)), EINVAL);
	ASSERT_MESSAGE_CONTAINS("offset 2 is not a multiple");
	ASSERT_OK(dispatch_at(cb, accel_buffer_ref_direct(sub, (uint64_t)align - 2, 64)));
	/* an indirect ref's own offset, at record */
	ASSERT_ERRNO(dispatch_at(cb, accel_buffer_ref_indirect(0, 2, 64)), EINVAL);
	ASSERT_MESSAGE_CONTAINS(want);
	ASSERT_ERRNO(dispatch_at(cb, accel_buffer_ref_indirect(0, UINT64_MAX, 8)), ERANGE);
	ASSERT_ERRNO(dispatch_at(cb, accel_buffer_ref_indirect(0, UINT64_MAX, ACCEL_WHOLE_BUFFER)),
		     EINVAL);
	/* nothing of the refused ones was recorded */
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), 3);
	ASSERT_OK(accel_command_buffer_end(cb));
	accel_buffer_release(sub);
	accel_command_buffer_release(cb);
}
END_TEST

START_TEST(test_binding_alignment_table)
{
	int64_t align = query(ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT);
	accel_command_buffer_t *cb = cb_new(0, 1);
	accel_binding_t b[1] = { { buf, 0, 128 } };
	accel_binding_table_t t = { 1, b };
	accel_semaphore_t *s = sem_new(0);
	uint32_t *p = map(buf);
	accel_buffer_t *sub = NULL;
	accel_queue_t *q = NULL;
	char want[200];
	POINT(sig, s, 1);

	ASSERT_OK(dispatch_at(cb, accel_buffer_ref_indirect(0, 0, 64)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_create(dev, 0, &q));
	memset(p, 0xee, 256);
	if (align > 1) {
		b[0].offset = 2;
		snprintf(want, sizeof(want),
			 "binding table slot 0: offset 2 is not a multiple of %lld, the alignment the command buffer needs",
			 (long long)align);
		ASSERT_ERRNO(accel_queue_execute(q, NULL, &sig, cb, &t, 0), EINVAL);
		ASSERT_MESSAGE_CONTAINS(want);
		ASSERT_MESSAGE_CONTAINS("binding alignment, ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT");
		/* a subspan at 2 with offset 0 is the same place */
		ASSERT_OK(accel_buffer_subspan(buf, 2, 200, &sub));
		b[0] = (accel_binding_t){ sub, 0, 128 };
		ASSERT_ERRNO(accel_queue_execute(q, NULL, &sig, cb, &t, 0), EINVAL);
		ASSERT_MESSAGE_CONTAINS("offset 2 is not a multiple");
		/* nothing was promised or run */
		ASSERT_ERRNO(accel_semaphore_wait(s, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
		ck_assert_uint_eq(p[0], 0xeeeeeeee);
		ck_assert_uint_eq(p[1], 0xeeeeeeee);
		b[0] = (accel_binding_t){ sub, (uint64_t)align - 2, 128 };
	} else {
		b[0].offset = 4; /* cpu: any offset (fill_u32 writes words) */
	}
	/* byte 4 of the root, aligned: it runs, and writes there */
	ASSERT_OK(accel_queue_execute(q, NULL, &sig, cb, &t, 0));
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(p[0], 0xeeeeeeee);
	ck_assert_uint_eq(p[1], 0);
	ck_assert_uint_eq(p[16], 0);
	ck_assert_uint_eq(p[17], 0xeeeeeeee);
	accel_buffer_release(sub);
	accel_queue_release(q);
	accel_semaphore_release(s);
	accel_command_buffer_release(cb);
}
END_TEST

static Suite *enum_suite(void)
{
	Suite *suite = suite_create("enum");
	TCase *tc = tcase_create("enumerate");

	tcase_add_checked_fixture(tc, test_clear_env, NULL);
	tcase_add_test(tc, test_enum_cpu_matches_affinity);
	tcase_add_test(tc, test_enum_info_grows_by_size);
	tcase_add_test(tc, test_enum_errors);
	tcase_add_test(tc, test_enum_every_driver);
#ifdef HAVE_VULKAN_H
	tcase_add_test(tc, test_enum_vulkan_matches_vulkan);
#endif
	suite_add_tcase(suite, tc);

	tc = tcase_create("query");
	tcase_add_checked_fixture(tc, device_setup, device_teardown);
	tcase_add_test(tc, test_query_every_key);
	tcase_add_test(tc, test_query_errors);
	tcase_add_test(tc, test_query_matches_backend);
	tcase_add_test(tc, test_query_three_threads);
	suite_add_tcase(suite, tc);

	tc = tcase_create("alignment");
	tcase_add_checked_fixture(tc, align_setup, align_teardown);
	tcase_add_test(tc, test_binding_alignment_direct);
	tcase_add_test(tc, test_binding_alignment_table);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	test_require_device();
	return test_run_suite(enum_suite());
}
