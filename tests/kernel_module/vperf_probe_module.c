// SPDX-License-Identifier: GPL-2.0
// The kernel module of vperf's kernel-probe tests (tests/integration/probe_kernel_test.cpp):
// built with DWARF against the test guest's kernel headers (scripts/test-guest.sh module) and
// loaded in the guest. Writing N to /sys/kernel/debug/vperf_probe_module/calls calls
// vperf_probe_module_target(index, &record) for index 0..N-1 with record {index, index * 7,
// "even" or "odd"}; each call first counts itself in the static vperf_probe_module_calls and
// returns index * 3 + record->weight (10 * index). The ground truth of vperf probe -m: argument,
// member, string and static values at every hit, $retval at every return, and the module's
// functions for ftrace's :mod: filters.
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/uaccess.h>

struct vperf_probe_record {
	int id;
	long weight;
	const char *label;
};

static long vperf_probe_module_calls;

noinline long vperf_probe_module_target(int index, const struct vperf_probe_record *record)
{
	vperf_probe_module_calls++;
	return index * 3 + record->weight;
}

static ssize_t calls_write(struct file *file, const char __user *buf, size_t len, loff_t *pos)
{
	char text[16] = { 0 };
	unsigned long n, i;
	long sum = 0;

	if (copy_from_user(text, buf, min(len, sizeof(text) - 1)))
		return -EFAULT;
	if (kstrtoul(strim(text), 10, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct vperf_probe_record record = { (int)i, (long)i * 7, (i % 2) ? "odd" : "even" };

		sum += vperf_probe_module_target((int)i, &record);
	}
	pr_debug("vperf_probe_module: %lu calls, results summing to %ld\n", n, sum);
	return len;
}

static const struct file_operations calls_fops = { .owner = THIS_MODULE, .write = calls_write };
static struct dentry *dir;

static int __init vperf_probe_module_init(void)
{
	dir = debugfs_create_dir("vperf_probe_module", NULL);
	debugfs_create_file("calls", 0200, dir, NULL, &calls_fops);
	return 0;
}

static void __exit vperf_probe_module_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(vperf_probe_module_init);
module_exit(vperf_probe_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("The probe target of vperf's kernel-probe tests");
