/* exec_env: the variables that keep a program on its node across an exec (wrap_exec.c). */
#ifndef HWEMU_SHIM_EXEC_ENV_H
#define HWEMU_SHIM_EXEC_ENV_H

/* Takes the HWEMU_* variables, LD_PRELOAD and LD_AUDIT of the environment the shim was loaded with; the
 * constructor calls it once, before main(). */
void exec_keep_env(void);

#endif
