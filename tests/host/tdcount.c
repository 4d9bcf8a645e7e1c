/*
 * tdcount.c - test helper: reads a trace.dat through libtracecmd's public
 * API only (tracecmd_open, tracecmd_read_data, tracecmd_iterate_events),
 * independent of vmtrace's own reader, and prints what it found:
 *   cpus N / total N / event SYSTEM:NAME COUNT lines
 *   -f SYSTEM:EVENT:F1,F2  also the fields F1 F2 (common ones too) of each
 *                          EVENT, one line per event, in time order
 *   -c PID                 also the comm the file maps PID to
 *   -m                     also, per CPU, "cpu N events N missed N unknown N":
 *                          the events the page headers say were lost before
 *                          a record (missed) and the records after a loss
 *                          of unknown size (unknown)
 * Exit 1 if the file does not open or a CPU's timestamps go backwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <trace-cmd/trace-cmd.h>

#define TDC_MAX_IDS	65536

static unsigned long long tdc_count[TDC_MAX_IDS];
static const char *tdc_sys, *tdc_ev;
static char *tdc_fields;

static int tdc_show(struct tracecmd_input *in, struct tep_record *rec, int cpu, void *data)
{
	struct tep_handle *tep = tracecmd_get_tep(in);
	struct tep_event *e = tep_find_event_by_record(tep, rec);
	unsigned long long v;
	char list[256], *f, *save = NULL;

	(void)cpu;
	(void)data;
	if (!e || strcmp(e->system, tdc_sys) || strcmp(e->name, tdc_ev))
		return 0;
	snprintf(list, sizeof(list), "%s", tdc_fields);
	for (f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
		if (tep_get_any_field_val(NULL, e, f, rec, &v, 0) == 0)
			printf("%s%s=%llu", f == list ? "" : " ", f, v);
	printf(" ts=%llu\n", rec->ts);
	return 0;
}

int main(int argc, char **argv)
{
	struct tracecmd_input *in;
	struct tep_handle *tep;
	unsigned long long total = 0;
	int cpus, bad = 0, pid = -1, opt, missed = 0;
	char *spec = NULL;

	while ((opt = getopt(argc, argv, "f:c:m")) != -1) {
		if (opt == 'f')
			spec = optarg;
		else if (opt == 'm')
			missed = 1;
		else if (opt == 'c')
			pid = atoi(optarg);
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: tdcount [-f SYS:EVENT:FIELD] [-c PID] [-m] trace.dat\n");
		return 2;
	}
	tracecmd_set_loglevel(TEP_LOG_CRITICAL);
	in = tracecmd_open(argv[optind], 0);
	if (!in) {
		fprintf(stderr, "tdcount: %s: tracecmd_open failed\n", argv[optind]);
		return 1;
	}
	tep = tracecmd_get_tep(in);
	cpus = tep_get_cpus(tep);
	printf("cpus %d\n", cpus);
	for (int cpu = 0; cpu < cpus; cpu++) {
		unsigned long long last = 0, n = 0, lost = 0, unknown = 0;
		struct tep_record *rec;

		while ((rec = tracecmd_read_data(in, cpu))) {
			int id = tep_data_type(tep, rec);

			if (rec->ts < last) {
				fprintf(stderr, "tdcount: cpu%d: timestamp %llu after %llu\n", cpu,
					rec->ts, last);
				bad = 1;
			}
			last = rec->ts;
			if (id >= 0 && id < TDC_MAX_IDS)
				tdc_count[id]++;
			if (rec->missed_events > 0)
				lost += rec->missed_events;
			else if (rec->missed_events < 0)
				unknown++;
			n++;
			tracecmd_free_record(rec);
		}
		total += n;
		if (missed)
			printf("cpu %d events %llu missed %llu unknown %llu\n", cpu, n, lost,
			       unknown);
	}
	printf("total %llu\n", total);
	for (int id = 0; id < TDC_MAX_IDS; id++) {
		struct tep_event *e;

		if (!tdc_count[id])
			continue;
		e = tep_find_event(tep, id);
		printf("event %s:%s %llu\n", e ? e->system : "?", e ? e->name : "?",
		       tdc_count[id]);
	}
	if (pid >= 0)
		printf("comm %d %s\n", pid, tep_data_comm_from_pid(tep, pid));
	if (spec) {
		tdc_sys = strtok(spec, ":");
		tdc_ev = strtok(NULL, ":");
		tdc_fields = strtok(NULL, ":");
		if (!tdc_sys || !tdc_ev || !tdc_fields)
			return 2;
		tracecmd_close(in);
		in = tracecmd_open(argv[optind], 0);
		if (!in)
			return 1;
		tracecmd_iterate_events(in, NULL, 0, tdc_show, NULL);
	}
	tracecmd_close(in);
	return bad;
}
