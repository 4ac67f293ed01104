// A C++ program against the installed library: every public header compiles as C++ and the
// functions link without extern "C" on the caller's side.
#include <ri/ri.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

static const uint8_t add_wasm[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7f,
    0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07, 0x07, 0x01, 0x03, 0x61, 0x64, 0x64,
    0x00, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b};

int main() {
    std::unique_ptr<ri_sandboxes, decltype(&ri_sandboxes_free)> factory(ri_sandboxes_new(), ri_sandboxes_free);
    ri_sandbox_config config = ri_sandbox_config_default();
    config.has_event_timestamp = true;
    ri_sandbox_error err{};
    std::unique_ptr<ri_sandbox, decltype(&ri_sandbox_free)> sb(ri_sandbox_create(factory.get(), &config, &err),
                                                                  ri_sandbox_free);
    if (!sb || !ri_sandbox_load(sb.get(), add_wasm, sizeof add_wasm, &err)) {
        std::cerr << ri_sandbox_errcode_name(err.code) << ": " << err.message << "\n";
        return 1;
    }
    ri_sandbox_result r = ri_sandbox_execute(sb.get(), "add", "[40, 2]");
    std::string value = r.value_json ? r.value_json : "(none)";
    bool ok = r.ok && value == "42";
    ri_sandbox_result_free(&r);
    std::cout << "ri " << ri_version() << " from C++: add(40, 2) = " << value << "\n";
    return ok ? 0 : 1;
}
