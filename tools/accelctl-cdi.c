// SPDX-License-Identifier: MIT
/*
 * accelctl cdi: write a Container Device Interface (CDI) spec that hands
 * /dev/accelsched to containers (podman, containerd, CRI-O; and so to
 * Kubernetes device plugins and DRA drivers, which name CDI devices).
 *
 * The spec follows CDI 0.5.0 (what Debian bookworm's podman reads; later
 * runtimes read it too): kind "accelsched.io/engine" (--kind), a device
 * "all" whose edits give the device node, and one device per engine the
 * module has (/sys/kernel/accelsched/engines/<name>, which exists from
 * the first queue that names the engine), giving the same node plus
 * ACCEL_ENGINE=<engine> in the environment, for the application to pick
 * its queue's engine. The node's type, major and minor come from stat().
 *
 * Written atomically (a temporary file in the same folder, fsync, rename)
 * with mode 0644. A file there that another tool wrote (another kind) is
 * never replaced.
 *
 * Exit status: 0 written, 1 failure (no module, not a char device, folder
 * missing, foreign file), 2 usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "accelctl.h"
#include "json.h"

#define CDI_VERSION "0.5.0"
#define CDI_KIND "accelsched.io/engine"
#define CDI_STATIC "/etc/cdi/accelsched.json"
#define CDI_DYNAMIC "/var/run/cdi/accelsched.json"
#define CDI_DEVICE "/dev/accelsched"
#define CDI_SYSFS "/sys/kernel/accelsched"
#define ENGINES_MAX 256

struct cdi_opts {
	const char *out;    /* the spec file, or NULL with --print */
	const char *device; /* the node */
	const char *sysfs;  /* the module's sysfs root */
	const char *kind;
};

static void cdi_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s cdi [-o FILE | --dynamic | --print] [--kind VENDOR/CLASS]\n"
		"                [--device PATH] [--sysfs DIR]\n"
		"\n"
		"Write a Container Device Interface spec exposing " CDI_DEVICE " to\n"
		"container runtimes (podman --device " CDI_KIND "=all).\n"
		"\n"
		"  -o, --output FILE  where to write (default " CDI_STATIC ";\n"
		"                     - for stdout)\n"
		"      --dynamic      write " CDI_DYNAMIC " (runtime state, gone at reboot)\n"
		"  -p, --print        print the spec on stdout instead\n"
		"      --kind K       the devices' kind (default " CDI_KIND ")\n"
		"      --device PATH  the device node (default " CDI_DEVICE ")\n"
		"      --sysfs DIR    the module's sysfs root, for its engines\n"
		"                     (default " CDI_SYSFS ")\n"
		"\n"
		"Devices: 'all', and one per engine of the module with ACCEL_ENGINE=<name>.\n"
		"Exit status: 0 written, 1 failure, 2 usage error.\n",
		progname);
}

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/*
 * CDI's kind: "vendor/class". The vendor starts with a letter, ends with
 * a letter or digit and holds letters, digits, '-', '_' and '.'; the
 * class likewise without '.'.
 */
static bool kind_part_ok(const char *s, size_t n, bool dots)
{
	if (!n || !is_letter(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    !(dots && s[i] == '.'))
			return false;
	return true;
}

static bool kind_ok(const char *k)
{
	const char *slash = strchr(k, '/');

	return slash && !strchr(slash + 1, '/') &&
	       kind_part_ok(k, (size_t)(slash - k), true) &&
	       kind_part_ok(slash + 1, strlen(slash + 1), false);
}

/*
 * A device name for an engine: CDI allows letters, digits, '-', '_', '.'
 * (and, from 0.6, ':'), starting and ending with a letter or digit. The
 * module's engine names are [a-z0-9:._-]; a ':' becomes '-'. Returns
 * false for a name that cannot be one (it is then left out, with a note).
 */
static bool device_name(const char *engine, char *out, size_t len)
{
	size_t n = strlen(engine);

	if (!n || n >= len || !is_alnum(engine[0]) || !is_alnum(engine[n - 1]))
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = engine[i];

		if (c == ':')
			c = '-';
		else if (c && !is_alnum(c) && c != '-' && c != '_' && c != '.')
			return false;
		out[i] = c;
	}
	return strcmp(out, "all") != 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The engines under @sysfs/engines, sorted; 0 of them if it has none. */
static int read_engines(const char *sysfs, char **names, int max)
{
	char path[4096];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "%s/engines", sysfs);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dir)) && n < max) {
		if (d->d_name[0] == '.')
			continue;
		names[n] = strdup(d->d_name);
		if (!names[n])
			break;
		n++;
	}
	closedir(dir);
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	return n;
}

static void print_node(FILE *f, const char *path, const struct stat *st)
{
	fputs("{\"path\": ", f);
	json_fstring(f, path);
	fprintf(f, ", \"type\": \"c\", \"major\": %u, \"minor\": %u, "
		"\"permissions\": \"rw\"}", major(st->st_rdev), minor(st->st_rdev));
}

static void print_spec(FILE *f, const struct cdi_opts *o, const struct stat *st,
		       char **engines, int n)
{
	char name[256];

	fprintf(f, "{\n  \"cdiVersion\": \"" CDI_VERSION "\",\n  \"kind\": ");
	json_fstring(f, o->kind);
	fputs(",\n  \"devices\": [\n    {\"name\": \"all\", \"containerEdits\": "
	      "{\"deviceNodes\": [", f);
	print_node(f, o->device, st);
	fputs("]}}", f);
	for (int i = 0; i < n; i++) {
		char env[512];

		if (!device_name(engines[i], name, sizeof(name))) {
			fprintf(stderr, "%s: cdi: engine '%s' has no valid CDI device name; left out\n",
				progname, engines[i]);
			continue;
		}
		snprintf(env, sizeof(env), "ACCEL_ENGINE=%s", engines[i]);
		fputs(",\n    {\"name\": ", f);
		json_fstring(f, name);
		fputs(", \"containerEdits\": {\"env\": [", f);
		json_fstring(f, env);
		fputs("], \"deviceNodes\": [", f);
		print_node(f, o->device, st);
		fputs("]}}", f);
	}
	fputs("\n  ]\n}\n", f);
}

/*
 * Whether @path holds a spec this command wrote (its kind, as written).
 * Only a regular file can: anything else (a FIFO, whose open would wait
 * for a writer and whose read for data; a device) is not read at all,
 * and opened O_NONBLOCK so that telling cannot block either.
 */
static int ours(const char *path, const char *kind)
{
	char buf[8192], want[512];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	snprintf(want, sizeof(want), "\"kind\": \"%s\"", kind);
	return strstr(buf, "\"cdiVersion\"") && strstr(buf, want);
}

/*
 * Say why @dir, the folder of @out, cannot hold the spec (@err). mkdir -p
 * fixes only a folder that is missing: where a part of the path is a
 * file (some/file of some/file/x.json) it would fail too, so that part
 * is named as no folder instead.
 */
static void no_folder(const char *dir, const char *out, int err)
{
	char part[4096];
	struct stat st;
	char *slash;

	if (err == ENOENT) {
		fprintf(stderr, "%s: cdi: no folder %s for %s; create it (mkdir -p %s) or pass -o FILE\n",
			progname, dir, out, dir);
		return;
	}
	if (err != ENOTDIR) {
		fprintf(stderr, "%s: cdi: %s: %s; pass -o FILE\n", progname,
			dir, strerror(err));
		return;
	}
	/* the deepest part of @dir that exists is the one that is no folder */
	snprintf(part, sizeof(part), "%s", dir);
	while (stat(part, &st) && (slash = strrchr(part, '/')) && slash != part)
		*slash = '\0';
	fprintf(stderr, "%s: cdi: %s is not a folder, so %s cannot be written; pass -o FILE in a folder\n",
		progname, part, out);
}

static int write_spec(const struct cdi_opts *o, const struct stat *st,
		      char **engines, int n)
{
	char dir[4096], tmp[4200];
	const char *slash = strrchr(o->out, '/');
	struct stat ds;
	FILE *f;
	int fd, r, err;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - o->out) : 1,
		 slash ? (slash == o->out ? "/" : o->out) : ".");
	err = stat(dir, &ds) ? errno : S_ISDIR(ds.st_mode) ? 0 : ENOTDIR;
	if (err) {
		no_folder(dir, o->out, err);
		return EXIT_FAILURE;
	}
	r = ours(o->out, o->kind);
	if (r <= 0) {
		fprintf(stderr, "%s: cdi: %s %s; remove it or pass -o another file\n",
			progname, o->out, r < 0 ? "cannot be read" :
			"exists and is not a spec of this kind written by accelctl cdi");
		return EXIT_FAILURE;
	}
	snprintf(tmp, sizeof(tmp), "%s/.accelsched-cdi.XXXXXX", dir);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: cdi: cannot create a file in %s: %s\n",
			progname, dir, strerror(errno));
		return EXIT_FAILURE;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return EXIT_FAILURE;
	}
	print_spec(f, o, st, engines, n);
	if (fflush(f) || fchmod(fd, 0644) || fsync(fd) || ferror(f)) {
		fprintf(stderr, "%s: cdi: writing %s failed: %s\n", progname, tmp,
			strerror(errno));
		fclose(f);
		unlink(tmp);
		return EXIT_FAILURE;
	}
	fclose(f);
	if (rename(tmp, o->out)) {
		fprintf(stderr, "%s: cdi: cannot replace %s: %s\n", progname, o->out,
			strerror(errno));
		unlink(tmp);
		return EXIT_FAILURE;
	}
	printf("%s: wrote %s: %s=all and %d engine device%s\n", progname, o->out,
	       o->kind, n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

int cmd_cdi(int argc, char **argv)
{
	enum { OPT_OUTPUT = OPT_LONG, OPT_DYNAMIC, OPT_PRINT, OPT_KIND,
	       OPT_DEVICE, OPT_SYSFS, OPT_HELP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "dynamic", no_argument, NULL, OPT_DYNAMIC },
		{ "print", no_argument, NULL, OPT_PRINT },
		{ "kind", required_argument, NULL, OPT_KIND },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "sysfs", required_argument, NULL, OPT_SYSFS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct cdi_opts o = { .out = CDI_STATIC, .device = CDI_DEVICE,
			      .sysfs = getenv("ACCELCTL_SYSFS") ?: CDI_SYSFS,
			      .kind = CDI_KIND };
	char *engines[ENGINES_MAX];
	bool kind_given = false, device_given = false, sysfs_given = false;
	struct stat st, ss;
	int c, n, ret, err, outs = 0;

	optind = 0; /* as the other commands: options may follow arguments */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:ph", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
		case OPT_OUTPUT:
			o.out = optarg;
			outs++;
			break;
		case OPT_DYNAMIC:
			o.out = CDI_DYNAMIC;
			outs++;
			break;
		case 'p':
		case OPT_PRINT:
			o.out = NULL;
			outs++;
			break;
		case OPT_KIND:
			if (option_once("cdi", "--kind", &kind_given))
				return EXIT_USAGE;
			o.kind = optarg;
			break;
		case OPT_DEVICE:
			if (option_once("cdi", "--device", &device_given))
				return EXIT_USAGE;
			o.device = optarg;
			break;
		case OPT_SYSFS:
			if (option_once("cdi", "--sysfs", &sysfs_given))
				return EXIT_USAGE;
			o.sysfs = optarg;
			break;
		case 'h':
		case OPT_HELP:
			cdi_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return option_error("cdi", c, argv, NULL);
		}
	}
	if (optind < argc)
		return usage_error("cdi: unexpected argument '%s'", argv[optind]);
	if (outs > 1)
		return usage_error("cdi: give one of -o, --dynamic and --print");
	if (!kind_ok(o.kind))
		return usage_error("cdi: bad kind '%s': give VENDOR/CLASS, each starting with a letter and ending with a letter or digit, such as " CDI_KIND,
				   o.kind);
	if (o.out && !*o.out)
		return usage_error("cdi: -o needs a file name");
	/* '-' is standard output, as for trace -o; ./- names such a file */
	if (o.out && strcmp(o.out, "-") == 0)
		o.out = NULL;
	if (!*o.sysfs)
		return usage_error("cdi: --sysfs needs a folder");
	if (stat(o.device, &st)) {
		fprintf(stderr, "%s: cdi: %s: %s; load the module (modprobe accelsched) or pass --device PATH\n",
			progname, o.device, strerror(errno));
		return EXIT_FAILURE;
	}
	if (!S_ISCHR(st.st_mode)) {
		fprintf(stderr, "%s: cdi: %s is not a character device; pass the accelsched device node with --device PATH\n",
			progname, o.device);
		return EXIT_FAILURE;
	}
	/*
	 * A folder that is not there is a module not loaded or a mistyped
	 * --sysfs, not a module without engines: a spec of "all" only
	 * would hide that the engines were never seen.
	 */
	err = stat(o.sysfs, &ss) ? errno : S_ISDIR(ss.st_mode) ? 0 : ENOTDIR;
	if (err) {
		fprintf(stderr, "%s: cdi: %s: %s; load the module (modprobe accelsched) or pass --sysfs DIR\n",
			progname, o.sysfs, strerror(err));
		return EXIT_FAILURE;
	}
	n = read_engines(o.sysfs, engines, ENGINES_MAX);
	if (n < 0) {
		fprintf(stderr, "%s: cdi: cannot list %s/engines: %s\n", progname,
			o.sysfs, strerror(-n));
		return EXIT_FAILURE;
	}
	if (o.out) {
		ret = write_spec(&o, &st, engines, n);
	} else {
		print_spec(stdout, &o, &st, engines, n);
		ret = EXIT_SUCCESS;
	}
	for (int i = 0; i < n; i++)
		free(engines[i]);
	return ret;
}
