/*
 * proc.c - small /proc and debugfs readers of the recorder and the KVM
 * facts collector (see proc.h).  Recorder main thread; blocking reads of
 * small files, no allocation.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc.h"

#define PROC_PATH_MAX		64
#define PROC_LINE_MAX		256
#define PROC_VENDOR_KEY		"vendor_id"

int host_proc_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	buf[0] = 0;
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return -1;
	}
	while (n && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
	return 0;
}

int host_proc_each_task(pid_t pid, void (*fn)(void *arg, pid_t pid, pid_t tid), void *arg)
{
	char path[PROC_PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid > 0)
			fn(arg, pid, tid);
	}
	closedir(d);
	return 0;
}

int host_proc_cpu_vendor(char *buf, size_t len)
{
	FILE *fp = fopen("/proc/cpuinfo", "re");
	char line[PROC_LINE_MAX];
	int ret = -1;

	buf[0] = 0;
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char *colon = strchr(line, ':');
		char *v;

		if (strncmp(line, PROC_VENDOR_KEY, strlen(PROC_VENDOR_KEY)) || !colon)
			continue;
		v = colon + 1 + strspn(colon + 1, " \t");
		v[strcspn(v, "\n")] = 0;
		snprintf(buf, len, "%s", v);
		ret = *buf ? 0 : -1;
		break;
	}
	fclose(fp);
	return ret;
}
