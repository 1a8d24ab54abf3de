// kiln-plugin-check's checks of a data source: its sample corpus read through the source, and
// its fuzz harness run from that corpus. See Note [A source ships its checks] in
// plugin_check_source.cpp.
#pragma once

#include <string>
#include <vector>

namespace plugin_check {

// Checks each source of `schemes` that the plugin file `path` (already loaded) registered,
// printing a section per scheme; fuzzes each for `fuzz_seconds` (0: not at all). Returns the
// number of failed checks.
int check_data_sources(const std::string& path, const std::vector<std::string>& schemes,
                       double fuzz_seconds);

}  // namespace plugin_check
