/* SPDX-License-Identifier: GPL-2.0 */
#ifndef GPMM_CLI_H
#define GPMM_CLI_H

/* The CLI's top level: the only place that prints errors and exits. */
int cli_main(int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_frag(int argc, char **argv);
int cmd_host_check(int argc, char **argv);
int cmd_fragment(int argc, char **argv);

#endif
