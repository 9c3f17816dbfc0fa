// What the CPU backend reports about the machine: processor name and memory.
#pragma once

#include <cstddef>
#include <string>

namespace opkit::cpu {

std::string cpu_model_name();          // /proc/cpuinfo's "model name", else the machine name
std::size_t total_memory_bytes();      // physical memory
std::size_t available_memory_bytes();  // /proc/meminfo's MemAvailable, else free pages

}  // namespace opkit::cpu
