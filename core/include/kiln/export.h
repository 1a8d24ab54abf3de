// Symbol visibility for libkiln_core.so: everything is hidden unless marked KILN_API.
#pragma once

#define KILN_API __attribute__((visibility("default")))
