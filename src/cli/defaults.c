/* The command line's sandbox defaults (cli.h). */
#include "cli/cli.h"

ri_sandbox_config ri_cli_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = RI_CLI_DEFAULT_MAX_GAS;
    c.max_memory_bytes = RI_CLI_DEFAULT_MAX_MEMORY;
    c.max_execution_ms = RI_CLI_NO_TIMEOUT;
    return c;
}
