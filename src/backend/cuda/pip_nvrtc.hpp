// Where `pip install nvidia-cuda-nvrtc` (CUDA 12: nvidia/cuda_nvrtc/lib; CUDA 13: nvidia/cu13/lib)
// puts NVRTC, so that the library doctor recommends is also the one opkit finds.
#pragma once

#include <string>
#include <vector>

namespace opkit::cuda {

// Candidate libnvrtc paths inside the Python environments this process can see: the folders in
// $OPKIT_SITE_PACKAGES (the Python package sets it to its sys.path), $VIRTUAL_ENV, $CONDA_PREFIX,
// the prefix of this executable, ~/.local and /usr/local. Newest CUDA first; only existing files.
std::vector<std::string> pip_nvrtc_candidates();

}  // namespace opkit::cuda
