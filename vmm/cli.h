/* SPDX-License-Identifier: GPL-2.0 */
#ifndef GPMM_CLI_H
#define GPMM_CLI_H

/* The CLI's top level: the only place that prints errors and exits. */
int cli_main(int argc, char **argv);

#endif
