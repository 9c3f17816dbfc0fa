// Module -> Kernel lookup (source names resolve through the lowered-name table) and the
// checked, typed launch path.
#include "opkit/module.hpp"

#include "device_access.hpp"
#include "opkit/backend.hpp"
#include "opkit/error.hpp"

namespace opkit {

Module::Module(Device device, std::shared_ptr<backend::Module> impl, std::shared_ptr<const CompiledProgram> program)
    : device_(std::move(device)), impl_(std::move(impl)), program_(std::move(program)) {}

Kernel Module::kernel(std::string_view name) const {
  std::string wanted(name);
  auto lowered = program_->lowered_names.find(wanted);
  const std::string& symbol = lowered != program_->lowered_names.end() ? lowered->second : wanted;
  auto function = impl_->function(symbol);
  if (!function) {
    std::string known;
    for (const auto& [source_name, sym] : program_->lowered_names) known += (known.empty() ? "" : ", ") + source_name;
    throw Error(Errc::not_found, "Module::kernel",
                "no kernel named '" + wanted + "' in " + program_->source_name +
                    (known.empty() ? std::string(" (no __global__ functions were found in the source)")
                                   : " (kernels found: " + known + ")"))
        .with_kernel(wanted)
        .with_source_name(program_->source_name);
  }
  return Kernel(device_, std::move(function), wanted);
}

GlobalVariable Module::global(std::string_view symbol) const {
  std::string wanted(symbol);
  if (auto found = impl_->global(wanted)) return *found;
  throw Error(Errc::not_found, "Module::global",
              "no __device__ or __constant__ variable '" + wanted + "' in " + program_->source_name +
                  " (a variable in a namespace is known by its mangled name; declare it extern \"C\" or at global "
                  "scope)")
      .with_source_name(program_->source_name);
}

Kernel::Kernel(Device device, std::shared_ptr<backend::Function> impl, std::string name)
    : device_(std::move(device)),
      impl_(std::move(impl)),
      name_(std::move(name)),
      default_stream_(detail::DeviceAccess::impl(device_).default_stream()) {
  backend::ParamInfo params = impl_->params();
  params_known_ = params.known;
  param_sizes_ = std::move(params.sizes);
}

void Kernel::launch_packed(const LaunchConfig& config, void** args, const std::size_t* sizes, std::size_t count) const {
  if (config.grid.count() == 0 || config.block.count() == 0)
    throw Error(Errc::invalid_argument, "Kernel::launch", "grid and block must not be empty").with_kernel(name_);
  if (params_known_) {
    if (param_sizes_.size() != count)
      throw Error(
          Errc::invalid_argument, "Kernel::launch",
          "kernel takes " + std::to_string(param_sizes_.size()) + " argument(s), " + std::to_string(count) + " given")
          .with_kernel(name_);
    for (std::size_t i = 0; i < count; ++i)
      if (param_sizes_[i] != sizes[i])
        throw Error(Errc::invalid_argument, "Kernel::launch",
                    "argument " + std::to_string(i) + " is " + std::to_string(sizes[i]) +
                        " bytes but the kernel's parameter is " + std::to_string(param_sizes_[i]) + " bytes")
            .with_kernel(name_);
  }
  if (config.stream != nullptr) {
    if (!(config.stream->device() == device_))
      throw Error(Errc::invalid_argument, "Kernel::launch", "the stream belongs to another device").with_kernel(name_);
    impl_->launch(config, detail::DeviceAccess::impl(*config.stream), args, sizes, count);
  } else {
    impl_->launch(config, *default_stream_, args, sizes, count);
  }
}

KernelAttributes Kernel::attributes() const {
  return impl_->attributes();
}

void Kernel::carve_shared_memory_for(unsigned blocks_per_unit) const {
  impl_->carve_shared_memory_for(blocks_per_unit);
}

}  // namespace opkit
