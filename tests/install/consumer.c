/* A program a user writes against the installed library: it includes only <ri/ri.h>,
 * links with what pkg-config or find_package(ri) give, and runs a module in a sandbox. */
#include <stdio.h>
#include <string.h>

#include <ri/ri.h>

/* (module (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)) */
static const uint8_t add_wasm[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7f,
    0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07, 0x07, 0x01, 0x03, 0x61, 0x64, 0x64,
    0x00, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b};

int main(void) {
    if (strcmp(ri_version(), RI_VERSION_STRING) != 0 || ri_version_number() != RI_VERSION_NUMBER) {
        fprintf(stderr, "header version %s, library version %s\n", RI_VERSION_STRING, ri_version());
        return 1;
    }
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox_config config = ri_sandbox_config_default();
    config.has_event_timestamp = true;
    config.event_timestamp = 0;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &config, &err);
    if (!sb || !ri_sandbox_load(sb, add_wasm, sizeof add_wasm, &err)) {
        fprintf(stderr, "%s: %s\n", ri_sandbox_errcode_name(err.code), err.message);
        return 1;
    }
    ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[17, 25]");
    int ok = r.ok && r.value_json && strcmp(r.value_json, "42") == 0;
    printf("ri %s: add(17, 25) = %s\n", ri_version(), r.value_json ? r.value_json : "(none)");
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    return ok ? 0 : 1;
}
