// SPDX-License-Identifier: GPL-2.0
/*
 * mmls_exec: an exec chain for the mmlockstat exec test. Prints
 * "ready PID", waits for a line on stdin, then execs itself N times (one
 * process: the pid stays, so `mmlockstat -p PID` sees every exec). Each
 * exec takes the old mm's mmap_lock for read in exec_mmap() and releases
 * it after the task switched to the new mm.
 *
 * Usage: mmls_exec N
 * Exit status: 0 after the N execs, 1 if one failed (message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char next[16], line[16];
	long n;

	if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "chain"))) {
		fprintf(stderr, "usage: mmls_exec N\n");
		return 2;
	}
	n = strtol(argv[1], NULL, 10);
	if (n < 0 || n > 100000) {
		fprintf(stderr, "mmls_exec: bad N '%s' (0..100000)\n", argv[1]);
		return 2;
	}
	if (argc == 2) {	/* the first process: wait for go */
		printf("ready %d\n", getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "mmls_exec: no go line on stdin\n");
			return 1;
		}
	}
	if (n == 0) {
		printf("done\n");
		return 0;
	}
	snprintf(next, sizeof(next), "%ld", n - 1);
	execl("/proc/self/exe", "mmls_exec", next, "chain", (char *)NULL);
	perror("mmls_exec: execl /proc/self/exe");
	return 1;
}
