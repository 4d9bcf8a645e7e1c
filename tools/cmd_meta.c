/*
 * cmd_meta.c - `vmtrace meta`: show or set the vmtrace.meta of a directory from
 * scripts (tools/uftrace-tsc marks a patched uftrace's data directory as
 * clock=tsc domain=host).  Runs in the command's main thread; allocates.
 * The format itself is read and written by lib/meta.c only.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include "err.h"
#include "meta.h"
#include "cli.h"

static void meta_usage(FILE *fp)
{
	fprintf(fp,
		"usage: vmtrace meta DIR               print DIR/vmtrace.meta\n"
		"       vmtrace meta DIR KEY            print one value (exit 1 if absent)\n"
		"       vmtrace meta DIR KEY=VALUE...   set keys (the file is created if missing)\n");
}

static int meta_print(const char *dir, const char *key)
{
	struct vt_meta *m = vt_meta_read_dir(dir);
	const char *v;

	if (!m) {
		vt_err_print("meta");
		return VT_EXIT_FAIL;
	}
	if (key) {
		v = vt_meta_get(m, key);
		if (v)
			printf("%s\n", v);
		else
			fprintf(stderr, "vmtrace: meta: %s/%s has no key '%s'\n", dir, VT_META_FILE, key);
		vt_meta_free(m);
		return v ? VT_EXIT_OK : VT_EXIT_FAIL;
	}
	for (int i = 0; i < vt_meta_count(m); i++)
		vt_meta_print_line(stdout, vt_meta_key(m, i), vt_meta_val(m, i));
	vt_meta_free(m);
	return VT_EXIT_OK;
}

static int meta_set(const char *dir, int nr, char **kv)
{
	char path[4096];
	struct stat st;
	struct vt_meta *m;
	int ret = VT_EXIT_OK;

	snprintf(path, sizeof(path), "%s/%s", dir, VT_META_FILE);
	if (stat(path, &st) == 0) {
		m = vt_meta_read(path);
	} else if (errno == ENOENT) {
		m = vt_meta_new();
		if (!m)
			vt_err_set("out of memory");
	} else {
		m = NULL;
		vt_err_errno("%s", path);
	}
	if (!m) {
		vt_err_print("meta");
		return VT_EXIT_FAIL;
	}
	for (int i = 0; i < nr && ret == VT_EXIT_OK; i++) {
		char *eq = strchr(kv[i], '=');

		if (!eq || eq == kv[i]) {
			fprintf(stderr, "vmtrace: meta: '%s' is not KEY=VALUE\n", kv[i]);
			ret = VT_EXIT_USAGE;
			break;
		}
		*eq = '\0';
		if (vt_meta_set(m, kv[i], "%s", eq + 1) < 0) {
			vt_err_print("meta");
			ret = VT_EXIT_USAGE;
		}
		*eq = '=';
	}
	if (ret == VT_EXIT_OK && vt_meta_write_dir(m, dir) < 0) {
		vt_err_print("meta");
		ret = VT_EXIT_FAIL;
	}
	vt_meta_free(m);
	return ret;
}

/* `vmtrace meta DIR [KEY | KEY=VALUE...]`: returns an exit code. */
int cmd_meta(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		meta_usage(stdout);
		return VT_EXIT_OK;
	}
	if (argc < 2)
		return vt_cli_usage(meta_usage, 0);
	if (argv[1][0] == '-' && argv[1][1]) {
		vt_error("unknown option '%s'", argv[1]);
		return vt_cli_usage(meta_usage, 0);
	}
	if (argc == 2)
		return meta_print(argv[1], NULL);
	if (argc == 3 && !strchr(argv[2], '='))
		return meta_print(argv[1], argv[2]);
	return meta_set(argv[1], argc - 2, argv + 2);
}
