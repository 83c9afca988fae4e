// SPDX-License-Identifier: GPL-2.0
/* gpmm's main: the sub-command tables of cli.c decide the rest. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
