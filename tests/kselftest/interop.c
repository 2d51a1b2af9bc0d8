// SPDX-License-Identifier: MIT
/*
 * Interop with the kernel's dma_fence world through sync_file: a point
 * exported as a sync_file behaves like any driver's fence (poll, fence
 * status), and a real foreign fence imported as a point reaches it. The
 * foreign fence is vgem's (Debian's kernels have no sw_sync): a dumb buffer
 * exported as a dma-buf, a vgem fence attached to it, and the dma-buf's
 * fences taken out and put in with DMA_BUF_IOCTL_{EXPORT,IMPORT}_SYNC_FILE.
 */
#include <dirent.h>
#include <linux/dma-buf.h>
#include <pthread.h>
#include <linux/sync_file.h>
#include <xf86drm.h>

#include "syncobj_util.h"

/*
 * vgem's uapi (include/uapi/drm/vgem_drm.h in the kernel; libdrm ships no
 * copy): attach a fence to a buffer, signal it.
 */
struct vgem_fence_attach {
	__u32 handle;
	__u32 flags;
#define VGEM_FENCE_WRITE 0x1
	__u32 out_fence;
	__u32 pad;
};

struct vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};

#define DRM_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/* The vgem card's fd; or -1, the test skipped, and the caller returns. */
static int vgem_open(struct __test_metadata *_metadata)
{
	char path[64];

	for (int i = 0; i < 16; i++) {
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, "vgem")) {
			drmFreeVersion(v);
			return fd;
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	SKIP(return -1, "no vgem device (load the vgem module: the VM harness does)");
}

struct vgem_buf {
	int card;
	uint32_t handle;
	int dmabuf;
};

/* A vgem buffer and its dma-buf; or false, the test skipped (no vgem). */
static bool vgem_buf_new(struct __test_metadata *_metadata, struct vgem_buf *b)
{
	struct drm_mode_create_dumb d = { .width = 64, .height = 64, .bpp = 32 };

	b->card = vgem_open(_metadata);
	if (b->card < 0)
		return false;
	ASSERT_EQ(0, drmIoctl(b->card, DRM_IOCTL_MODE_CREATE_DUMB, &d));
	b->handle = d.handle;
	ASSERT_EQ(0, drmPrimeHandleToFD(b->card, b->handle, DRM_CLOEXEC | DRM_RDWR,
					&b->dmabuf));
	return true;
}

/* The dma-buf's current fences as a sync_file (read access: its writers). */
static int dmabuf_export_sync_file(struct __test_metadata *_metadata,
				   int dmabuf)
{
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };

	ASSERT_EQ(0, xioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e));
	return e.fd;
}

/* The status of a sync_file's fence: 1 signalled, 0 pending, <0 error. */
static int sync_file_status(struct __test_metadata *_metadata, int sf)
{
	struct sync_file_info info = { 0 };

	ASSERT_EQ(0, xioctl(sf, SYNC_IOC_FILE_INFO, &info));
	return info.status;
}

/*
 * Every test: skipped without the module, failed by a splat in the kernel
 * log (accel_test.h).
 */
FIXTURE(interop) {};

FIXTURE_SETUP(interop)
{
	accel_test_setup(_metadata, variant);
}

FIXTURE_TEARDOWN_PARENT(interop)
{
	accel_test_teardown(_metadata, variant);
}

TEST_F(interop, export_point_as_sync_file)
{
	int fd = accel_test_open(), sf, sf2, sf3;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, h, 3, &sf));
	ASSERT_FALSE(fd_ready(sf));
	ASSERT_EQ(0, sync_file_status(_metadata, sf));
	ASSERT_EQ(0, so_signal(fd, h, 2));
	ASSERT_FALSE(fd_ready(sf));
	ASSERT_EQ(0, so_signal(fd, h, 3));
	ASSERT_TRUE(fd_ready(sf));
	ASSERT_EQ(1, sync_file_status(_metadata, sf));
	/* A reached point exports signalled. */
	ASSERT_EQ(0, so_export_sync_file(fd, h, 1, &sf2));
	ASSERT_EQ(1, sync_file_status(_metadata, sf2));
	/* A failure reaches the sync_file as its fence's error. */
	ASSERT_EQ(0, so_export_sync_file(fd, h, 10, &sf3));
	ASSERT_EQ(0, so_fail(fd, h, -ENOLINK));
	ASSERT_TRUE(fd_ready(sf3));
	ASSERT_EQ(-ENOLINK, sync_file_status(_metadata, sf3));
	/* The sync_file outlives the syncobj and its file. */
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(-ENOLINK, sync_file_status(_metadata, sf3));
}

TEST_F(interop, sync_file_rejects_bad_input)
{
	int fd = accel_test_open(), sf, efd = open("/dev/null", O_RDONLY);
	struct accel_syncobj_sync_file a;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 5);
	ASSERT_EQ(-ENOENT, so_export_sync_file(fd, h + 1, 1, &sf));
	a = (struct accel_syncobj_sync_file){ .handle = h, .flags = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, &a), EINVAL);
	ASSERT_EQ(-EINVAL, so_import_sync_file(fd, h, 6, efd)); /* not a sync_file */
	/* No such fd: -EBADF, as SYNCOBJ_IMPORT and SYNCOBJ_EVENTFD say. */
	ASSERT_EQ(-EBADF, so_import_sync_file(fd, h, 6, -1));
	ASSERT_EQ(-EBADF, so_import_sync_file(fd, h, 6, INT32_MAX));
	ASSERT_EQ(0, so_export_sync_file(fd, h, 7, &sf));
	ASSERT_EQ(-EINVAL, so_import_sync_file(fd, h, 5, sf)); /* not above the value */
	ASSERT_EQ(-ENOENT, so_import_sync_file(fd, h + 1, 9, sf));
	ASSERT_EQ(5, so_value(_metadata, fd, h));
}

/* One syncobj's point feeds another's through a sync_file. */
TEST_F(interop, import_our_own_sync_file)
{
	int fd = accel_test_open(), sf;
	uint32_t a, b;
	uint64_t sub;

	ASSERT_GE(fd, 0);
	a = so_new(_metadata, fd, 0);
	b = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, a, 4, &sf));
	ASSERT_EQ(0, so_import_sync_file(fd, b, 2, sf));
	ASSERT_EQ(0, so_query(fd, b, NULL, &sub, NULL));
	ASSERT_EQ(2, sub); /* submitted, not reached */
	ASSERT_EQ(-ETIME, so_wait1(fd, b, 2, 0, 0));
	ASSERT_EQ(0, so_wait1(fd, b, 2, ACCEL_WAIT_SUBMITTED, 0));
	ASSERT_EQ(0, so_signal(fd, a, 4));
	ASSERT_EQ(0, so_wait1(fd, b, 2, 0, in_ms(5000)));
	ASSERT_EQ(2, so_value(_metadata, fd, b));
}

TEST_F(interop, import_vgem_fence_as_point)
{
	struct vgem_fence_attach at = { .flags = VGEM_FENCE_WRITE };
	struct vgem_fence_signal sig = { 0 };
	int fd = accel_test_open(), sf;
	struct vgem_buf b;
	uint64_t sub;
	uint32_t h;

	ASSERT_GE(fd, 0);
	if (!vgem_buf_new(_metadata, &b))
		return;
	at.handle = b.handle;
	ASSERT_EQ(0, drmIoctl(b.card, DRM_IOCTL_VGEM_FENCE_ATTACH, &at));
	sf = dmabuf_export_sync_file(_metadata, b.dmabuf);
	ASSERT_EQ(0, sync_file_status(_metadata, sf));

	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_import_sync_file(fd, h, 7, sf));
	ASSERT_EQ(0, so_query(fd, h, NULL, &sub, NULL));
	ASSERT_EQ(7, sub);
	ASSERT_EQ(0, so_wait1(fd, h, 7, ACCEL_WAIT_SUBMITTED, 0));
	ASSERT_EQ(-ETIME, so_wait1(fd, h, 7, 0, in_ms(50)));

	sig.fence = at.out_fence;
	ASSERT_EQ(0, drmIoctl(b.card, DRM_IOCTL_VGEM_FENCE_SIGNAL, &sig));
	ASSERT_EQ(0, so_wait1(fd, h, 7, 0, in_ms(5000)));
	ASSERT_EQ(7, so_value(_metadata, fd, h));
}

TEST_F(interop, export_point_into_a_dmabuf)
{
	struct dma_buf_import_sync_file imp = { .flags = DMA_BUF_SYNC_WRITE };
	int fd = accel_test_open(), sf, out;
	struct vgem_buf b;
	uint32_t h;

	ASSERT_GE(fd, 0);
	if (!vgem_buf_new(_metadata, &b))
		return;
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, h, 9, &sf));
	imp.fd = sf;
	ASSERT_EQ(0, xioctl(b.dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp));
	/* The dma-buf now carries our point: its writers are not done. */
	out = dmabuf_export_sync_file(_metadata, b.dmabuf);
	ASSERT_EQ(0, sync_file_status(_metadata, out));
	ASSERT_EQ(0, so_signal(fd, h, 9));
	ASSERT_EQ(1, sync_file_status(_metadata, out));
	close(out);
	out = dmabuf_export_sync_file(_metadata, b.dmabuf);
	ASSERT_EQ(1, sync_file_status(_metadata, out));
}

/*
 * Points are 64-bit: the kernel must compare our fences' seqnos on 64 bits.
 * A merge of points 10 and 10 + 2^31 + 5 of one syncobj keeps the later
 * one (compared on 32 bits, it kept 10 and was ready too early), and so
 * does a dma-buf given both: it stays busy until the later point.
 */
TEST_F(interop, points_compare_on_64_bits)
{
	const uint64_t lo = 10, hi = 10 + (1ull << 31) + 5;
	struct dma_buf_import_sync_file imp = { .flags = DMA_BUF_SYNC_WRITE };
	struct sync_merge_data m = { .name = "accel-merge" };
	int fd = accel_test_open(), a, b, out;
	struct vgem_buf vb;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, h, lo, &a));
	ASSERT_EQ(0, so_export_sync_file(fd, h, hi, &b));
	m.fd2 = b;
	ASSERT_EQ(0, xioctl(a, SYNC_IOC_MERGE, &m));
	if (!vgem_buf_new(_metadata, &vb))
		return;
	imp.fd = a;
	ASSERT_EQ(0, xioctl(vb.dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp));
	imp.fd = b;
	ASSERT_EQ(0, xioctl(vb.dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp));

	ASSERT_EQ(0, so_signal(fd, h, lo));
	ASSERT_EQ(1, sync_file_status(_metadata, a));
	ASSERT_EQ(0, sync_file_status(_metadata, b));
	ASSERT_EQ(0, sync_file_status(_metadata, m.fence));
	ASSERT_FALSE(fd_ready(m.fence));
	out = dmabuf_export_sync_file(_metadata, vb.dmabuf);
	ASSERT_EQ(0, sync_file_status(_metadata, out));
	close(out);

	ASSERT_EQ(0, so_signal(fd, h, hi));
	ASSERT_EQ(1, sync_file_status(_metadata, m.fence));
	out = dmabuf_export_sync_file(_metadata, vb.dmabuf);
	ASSERT_EQ(1, sync_file_status(_metadata, out));
	close(out);
	/* The same across 2^32 and near 2^64. */
	ASSERT_EQ(0, so_export_sync_file(fd, h, (1ull << 32) + 11, &a));
	ASSERT_EQ(0, so_export_sync_file(fd, h, ~0ull - 1, &b));
	m = (struct sync_merge_data){ .name = "accel-merge2", .fd2 = b };
	ASSERT_EQ(0, xioctl(a, SYNC_IOC_MERGE, &m));
	ASSERT_EQ(0, so_signal(fd, h, (1ull << 32) + 11));
	ASSERT_EQ(0, sync_file_status(_metadata, m.fence));
	ASSERT_EQ(0, so_signal(fd, h, ~0ull - 1));
	ASSERT_EQ(1, sync_file_status(_metadata, m.fence));
}

/*
 * Point fences are recycled (kmod/syncobj.c), while dma_resv looks at the
 * fences of a dma-buf under RCU only and takes a reference on whatever a
 * slot points to: a fence's memory may serve again only after a grace
 * period. (A SLAB_TYPESAFE_BY_RCU cache reused it at once, and this test
 * failed on 6.1 in about one run of ten.) A writer puts ever later points of one syncobj into a dma-buf (each
 * replacing, and so freeing, the one before, which it reaches first) and
 * makes fences of another kind die beside them: points of short-lived
 * syncobjs, which fail with -ENOENT when their syncobj goes. A reader
 * exports the dma-buf's fences meanwhile. What it gets is always one of
 * the writer's points, pending or reached, never a fence freed and reused
 * as one of the failed ones; and the debug kernel sees no splat.
 */
struct reuse_race {
	int fd, dmabuf;
	uint32_t h;
	uint64_t until_ns;
	int err;       /* the writer's first failure, as -errno */
	long rounds;
};

static void *reuse_writer(void *arg)
{
	struct reuse_race *r = arg;
	uint64_t p = 0;

	while (!r->err && now_ns() < r->until_ns) {
		struct dma_buf_import_sync_file imp = { .flags = DMA_BUF_SYNC_WRITE };
		uint32_t tmp;
		int sf, doomed = -1;

		if (so_export_sync_file(r->fd, r->h, ++p, &sf) ||
		    so_create(r->fd, 0, &tmp)) {
			r->err = -errno;
			break;
		}
		imp.fd = sf;
		if (xioctl(r->dmabuf, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &imp) ||
		    so_export_sync_file(r->fd, tmp, 1, &doomed) ||
		    so_signal(r->fd, r->h, p) || so_destroy(r->fd, tmp))
			r->err = -errno;
		close(sf);
		close(doomed); /* failed -ENOENT with its syncobj; freed */
		r->rounds++;
	}
	return NULL;
}

TEST_F(interop, reused_fences_race_a_dmabuf)
{
	struct reuse_race r = { .fd = accel_test_open() };
	long seen[2] = { 0, 0 };
	struct vgem_buf b;
	pthread_t t;

	ASSERT_GE(r.fd, 0);
	if (!vgem_buf_new(_metadata, &b))
		return;
	r.dmabuf = b.dmabuf;
	r.h = so_new(_metadata, r.fd, 0);
	r.until_ns = now_ns() + 1000000000ull;
	ASSERT_EQ(0, pthread_create(&t, NULL, reuse_writer, &r));
	while (now_ns() < r.until_ns) {
		struct sync_fence_info fi[4];
		struct sync_file_info info = { .num_fences = 4,
					       .sync_fence_info = (uintptr_t)fi };
		int out = dmabuf_export_sync_file(_metadata, b.dmabuf);

		ASSERT_EQ(0, xioctl(out, SYNC_IOC_FILE_INFO, &info));
		close(out);
		/* Pending or reached: a failed fence would be a reused one. */
		ASSERT_GE(info.status, 0);
		seen[info.status]++;
		/*
		 * Each fence: pending, and one of the writer's points; or
		 * signalled, whatever its names (a kernel may rename a fence
		 * once signalled, and a dma-buf whose fences are all signalled
		 * exports dma_fence_get_stub()'s, named "stub").
		 */
		for (uint32_t i = 0; i < info.num_fences; i++) {
			ASSERT_GE(fi[i].status, 0);
			if (fi[i].status)
				continue;
			ASSERT_EQ(0, strcmp(fi[i].driver_name, "accelsched"));
			ASSERT_EQ(0, strcmp(fi[i].obj_name, "syncobj"));
		}
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, r.err);
	TH_LOG("%ld writer rounds; the reader saw %ld pending, %ld reached",
	       r.rounds, seen[0], seen[1]);
	ASSERT_GT(r.rounds, 10);
	ASSERT_GT(seen[0] + seen[1], 10);
}

ACCEL_TEST_MAIN
