// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: tenants
 *
 * A tenant is who shares engine time: the cgroup (v2) of the task that
 * opened a file, read once at open (accel_sched_file_tenant()), or, for a
 * file opened from the root cgroup while root_tenant_per_file is set, that
 * file alone. A cgroup tenant is listed, with a sysfs directory,
 * /sys/kernel/accelsched/tenants/<cgroup-id>/: its weight (the
 * administrator's; a write pins the tenant until the module goes), its
 * queues and jobs, and its counters. Each of its files holds a reference;
 * the last makes a cgroup tenant dying, listed with its name taken until
 * its directory is deleted.
 *
 * **Locking.** accel_tenants_lock (a mutex) guards the tenant list,
 * references reaching zero and the administrator's pins; a sysfs write
 * takes it, so a tenant's directory is removed only after it is dropped. A
 * tenant's counters are atomic, as it spans engines, whose locks differ;
 * its weight may change at any time (READ_ONCE()).
 */
#include <linux/cgroup.h>
#include <linux/slab.h>

#include "internal.h"
#include "sched_internal.h"

#define ACCEL_TENANT_WEIGHT_DEFAULT 100

/* The cgroup tenants; the mutex also guards last references and pins. */
DEFINE_MUTEX(accel_tenants_lock);
LIST_HEAD(accel_tenants);

/* ---------------------------------------------------------------- tenants */

static void accel_tenant_destroy(struct accel_tenant *t)
{
	free_percpu(t->stats);
	kfree(t);
}

static void accel_tenant_kobj_release(struct kobject *kobj)
{
	accel_tenant_destroy(container_of(kobj, struct accel_tenant, kobj));
}

static const struct kobj_type accel_tenant_ktype;

/* Called with accel_tenants_lock, which it drops. */
static void accel_tenant_free(struct kref *ref)
{
	struct accel_tenant *t = container_of(ref, struct accel_tenant, ref);

	if (!t->cgroup_id) {
		mutex_unlock(&accel_tenants_lock);
		accel_tenant_destroy(t);
		return;
	}
	t->dying = true; /* listed, so its name stays taken until deleted */
	mutex_unlock(&accel_tenants_lock);
	kobject_del(&t->kobj); /* waits for a sysfs access in progress */
	mutex_lock(&accel_tenants_lock);
	list_del_init(&t->link);
	mutex_unlock(&accel_tenants_lock);
	accel_sysfs_removed();
	kobject_put(&t->kobj);
}

void accel_tenant_put(struct accel_tenant *t)
{
	kref_put_mutex(&t->ref, accel_tenant_free, &accel_tenants_lock);
}

/*
 * The tenant of a file opened now: the cgroup (v2) of the opening task.
 * A file opened from the root cgroup (every task, where nothing uses
 * cgroup2) is a tenant of its own while root_tenant_per_file is set (the
 * default): the root holds whatever was not placed anywhere, and sharing
 * one tenant there would make unrelated processes share one share.
 */
static u64 accel_current_tenant_id(void)
{
	u64 id = 0;
#ifdef CONFIG_CGROUPS
	struct cgroup *cg;

	rcu_read_lock();
	cg = task_dfl_cgroup(current);
	if (cgroup_parent(cg) || !READ_ONCE(accel_root_tenant_per_file))
		id = cgroup_id(cg);
	rcu_read_unlock();
#endif
	return id;
}

/**
 * accel_sched_file_tenant - bind a new file to its tenant.
 * @afile: the file, being opened.
 *
 * Return: 0, or -ENOMEM.
 * Context: process context (the opener's); takes accel_tenants_lock.
 */
int accel_sched_file_tenant(struct accel_file *afile)
{
	u64 id = accel_current_tenant_id();
	struct accel_tenant *t;

retry:
	mutex_lock(&accel_tenants_lock);
	if (id) {
		list_for_each_entry(t, &accel_tenants, link) {
			if (t->cgroup_id != id)
				continue;
			if (t->dying) {
				int gen = atomic_read(&accel_sysfs_gone);

				mutex_unlock(&accel_tenants_lock);
				accel_sysfs_wait_removal(gen);
				goto retry;
			}
			kref_get(&t->ref);
			goto out;
		}
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (t)
		t->stats = alloc_percpu(struct accel_tenant_stats);
	if (!t || !t->stats) {
		mutex_unlock(&accel_tenants_lock);
		kfree(t);
		return -ENOMEM;
	}
	kref_init(&t->ref);
	INIT_LIST_HEAD(&t->link);
	t->cgroup_id = id;
	t->weight = ACCEL_TENANT_WEIGHT_DEFAULT;
	t->inv_weight = accel_inv_weight(t->weight);
	if (id) {
		kobject_init(&t->kobj, &accel_tenant_ktype);
		if (kobject_add(&t->kobj, accel_sysfs_tenants, "%llu", id)) {
			mutex_unlock(&accel_tenants_lock);
			kobject_put(&t->kobj);
			return -ENOMEM;
		}
		list_add_tail(&t->link, &accel_tenants);
	}
out:
	mutex_unlock(&accel_tenants_lock);
	afile->tenant = t;
	return 0;
}

/* ------------------------------------------------------------------ sysfs */

static ssize_t accel_tenant_counter_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);
	size_t off = accel_counter_offset(attr);
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*(u64 *)((void *)per_cpu_ptr(t->stats, cpu) + off));
	return sysfs_emit(buf, "%llu\n", sum);
}

static ssize_t weight_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);

	return sysfs_emit(buf, "%u\n", READ_ONCE(t->weight));
}

static ssize_t weight_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);
	bool alive;
	u32 v;
	int ret;

	ret = accel_sysfs_admin_u32(buf, ACCEL_WEIGHT_MIN, ACCEL_WEIGHT_MAX, &v);
	if (ret)
		return ret;
	mutex_lock(&accel_tenants_lock);
	alive = accel_sysfs_pin_locked(&t->link, t->dying, &t->pinned, &t->ref);
	mutex_unlock(&accel_tenants_lock);
	if (!alive)
		return -ENODEV;
	/* Charges from now on use it; what was consumed stays consumed. */
	WRITE_ONCE(t->weight, v);
	WRITE_ONCE(t->inv_weight, accel_inv_weight(v));
	return count;
}

static ssize_t queues_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);

	return sysfs_emit(buf, "%d\n", atomic_read(&t->nr_queues));
}

static ssize_t jobs_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);

	return sysfs_emit(buf, "%d\n", atomic_read(&t->nr_jobs));
}

static struct kobj_attribute accel_tenant_weight = __ATTR_RW(weight);
static struct kobj_attribute accel_tenant_queues = __ATTR_RO(queues);
static struct kobj_attribute accel_tenant_jobs = __ATTR_RO(jobs);
/* A tenant's counters sit in its per-CPU &struct accel_tenant_stats. */
#define ACCEL_TENANT_COUNTER_ATTR(_name, _field)                             \
	static struct accel_counter_attr accel_tenant_##_name = {             \
		.attr = __ATTR(_name, 0444, accel_tenant_counter_show, NULL), \
		.offset = offsetof(struct accel_tenant_stats, _field),        \
	}

ACCEL_TENANT_COUNTER_ATTR(busy_ns, busy_ns);
ACCEL_TENANT_COUNTER_ATTR(released, nr_released);
ACCEL_TENANT_COUNTER_ATTR(latency_ns, latency_ns);

static struct attribute *accel_tenant_attrs[] = {
	&accel_tenant_weight.attr,
	&accel_tenant_queues.attr,
	&accel_tenant_jobs.attr,
	&accel_tenant_busy_ns.attr.attr,
	&accel_tenant_released.attr.attr,
	&accel_tenant_latency_ns.attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(accel_tenant);

static const struct kobj_type accel_tenant_ktype = {
	.release = accel_tenant_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = accel_tenant_groups,
};
