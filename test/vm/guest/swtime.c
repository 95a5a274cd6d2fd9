// SPDX-License-Identifier: MIT
/*
 * swtime: time write(2) calls of a value to a sysfs file, inside the VM.
 *
 *   swtime [-n N] [-p PREP] [-v] FILE VALUE...
 *	N timed writes (default 20), cycling through the VALUEs; with -p,
 *	an untimed write of PREP before each (e.g. -p mq-deadline FILE none
 *	times mq-deadline -> none); with -v, each write's time too.
 *   swtime -t SECS FILE VALUE...
 *	write the VALUEs round robin for SECS seconds (storm and EBUSY tests).
 *
 * Prints one line:
 *   n=N ok=N ebusy=N einval=N other=N median_ns=N min_ns=N max_ns=N
 * (with -v, then each write's ns, one a line, sorted, for a caller that
 * takes the median over several runs) and exits 0; a write error is
 * counted, not fatal, so the caller decides which errors are acceptable.
 * Exit 2 on usage or open errors.
 *
 * Each write opens the file afresh, as a shell redirection or a udev helper
 * does, but only the write(2) call is timed. A static C program, because
 * process start is slow under TCG and a Go runtime starts four threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* write_once returns 0 or the errno of the failed open or write. */
static int write_once(const char *file, const char *val, long long *ns)
{
	size_t len = strlen(val);
	long long t0;
	ssize_t r;
	int fd, err = 0;

	fd = open(file, O_WRONLY);
	if (fd < 0)
		return errno;
	t0 = now_ns();
	r = write(fd, val, len);
	if (ns)
		*ns = now_ns() - t0;
	if (r < 0)
		err = errno;
	else if ((size_t)r != len)
		err = EIO;
	close(fd);
	return err;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: swtime [-n N] [-p PREP] [-t SECS] [-v] FILE VALUE...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long n = 20, secs = 0, i, done = 0, ok = 0, ebusy = 0, einval = 0, other = 0;
	const char *prep = NULL, *file;
	long long *t, deadline = 0;
	int c, nval, err, verbose = 0;
	char **vals;

	while ((c = getopt(argc, argv, "n:p:t:v")) != -1) {
		switch (c) {
		case 'n': n = atol(optarg); break;
		case 'p': prep = optarg; break;
		case 't': secs = atol(optarg); break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (argc - optind < 2 || n < 1)
		usage();
	file = argv[optind];
	vals = argv + optind + 1;
	nval = argc - optind - 1;
	if (access(file, W_OK)) {
		fprintf(stderr, "swtime: %s: %s\n", file, strerror(errno));
		return 2;
	}
	if (secs) {
		deadline = now_ns() + secs * 1000000000LL;
		n = 1 << 24;
	}
	t = calloc(n, sizeof(*t));
	if (!t)
		return 2;
	for (i = 0; i < n; i++) {
		if (secs && now_ns() >= deadline)
			break;
		if (prep)
			write_once(file, prep, NULL);
		err = write_once(file, vals[i % nval], &t[i]);
		done++;
		if (!err)
			ok++;
		else if (err == EBUSY)
			ebusy++;
		else if (err == EINVAL)
			einval++;
		else {
			if (other++ == 0)
				fprintf(stderr, "swtime: %s: %s\n", file, strerror(err));
		}
	}
	qsort(t, done, sizeof(*t), cmp);
	printf("n=%ld ok=%ld ebusy=%ld einval=%ld other=%ld median_ns=%lld min_ns=%lld max_ns=%lld\n",
	       done, ok, ebusy, einval, other,
	       done ? (done % 2 ? t[done / 2] : (t[done / 2 - 1] + t[done / 2]) / 2) : 0,
	       done ? t[0] : 0, done ? t[done - 1] : 0);
	for (i = 0; verbose && i < done; i++)
		printf("%lld\n", t[i]);
	return 0;
}
