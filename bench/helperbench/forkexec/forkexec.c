// forkexec: time one fork(2) + execve(2) + wait of a command, the way
// systemd-udevd starts a RUN+= program (a plain fork of the worker, not
// the vfork that Go's os/exec uses), and print the wall time in ns.
// The command's stdout and stderr go to /dev/null; the exit status is
// the command's (127 if it could not be started).
//
// usage: forkexec PROGRAM [ARG...]
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	int status, null;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: forkexec PROGRAM [ARG...]\n");
		return 2;
	}
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0) {
		perror("forkexec: /dev/null");
		return 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		return 127;
	}
	if (pid == 0) {
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("forkexec: waitpid");
		return 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}
