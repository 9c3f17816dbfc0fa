"""The package surface: devices, device names, errors as exceptions with their parts."""

import pytest

import opkit
from conftest import CPU_BACKEND_MISSING, CUDA_MISSING


def test_error_is_a_runtime_error_and_compile_error_an_error():
    assert issubclass(opkit.Error, RuntimeError)
    assert issubclass(opkit.CompileError, opkit.Error)


def test_devices_lists_what_the_backends_offer():
    found = opkit.devices()
    assert isinstance(found, list)
    assert any(d.is_gpu for d in found) == (CUDA_MISSING is None)
    assert any(d.kind == "cpu" for d in found) == (CPU_BACKEND_MISSING is None)
    for d in found:
        assert d.name and d.kind in ("cuda", "cpu") and d.compute_units > 0 and repr(d).startswith("<opkit.Device")
        assert d.dlpack_device == ((2, d.ordinal) if d.is_gpu else (1, 0))


def test_missing_backend_raises_opkit_error_saying_why():
    if CUDA_MISSING is None:
        pytest.skip("this machine has a GPU")
    with pytest.raises(opkit.Error) as caught:
        opkit.get_device("cuda")
    assert caught.value.kind == "unavailable" and caught.value.message


def test_device_names_are_checked():
    with pytest.raises(ValueError, match="cuda:N"):
        opkit.get_device("gpu0")
    with pytest.raises(TypeError):
        opkit.get_device(1.5)


def test_default_device_is_the_gpu_when_there_is_one():
    if CUDA_MISSING is not None and CPU_BACKEND_MISSING is not None:
        with pytest.raises(opkit.Error):
            opkit.default_device()
        return
    assert opkit.default_device().is_gpu == (CUDA_MISSING is None)


def test_version_is_a_string():
    assert isinstance(opkit.__version__, str) and opkit.__version__.count(".") == 2


def test_extension_shares_the_process_cpp_runtime():
    # A static libstdc++ inside the extension crashed in processes that also load libstdc++.so.6
    # (after `import torch`: null locale facets in number formatting). The build links the shared one.
    import shutil
    import subprocess
    import sys

    from opkit import _opkit

    if not sys.platform.startswith("linux") or shutil.which("readelf") is None:
        pytest.skip("needs Linux and readelf")
    dynamic = subprocess.run(["readelf", "-d", _opkit.__file__], capture_output=True, text=True, check=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert any("libstdc++.so" in line or "libc++.so" in line for line in needed), (
        f"{_opkit.__file__} carries its own C++ runtime (no libstdc++.so among {needed})"
    )


def test_doctor_runs_in_this_process_and_finds_one_cpp_runtime():
    import io

    out = io.StringIO()
    report = opkit.doctor(smoke=False, file=out)
    names = [c["name"] for c in report["checks"]]
    for name in ("driver", "nvrtc", "cache", "cpu backend", "c++ runtime"):
        assert name in names
    runtime = next(c for c in report["checks"] if c["name"] == "c++ runtime")
    assert runtime["status"] == "ok", runtime  # the extension shares the process's libstdc++
    assert report["ready"] == (report["working_gpus"] > 0 or report["cpu_backend_works"])
    text = out.getvalue()
    assert text.startswith("opkit ") and "c++ runtime" in text and text.rstrip().splitlines()[-1].startswith(("ready", "not ready"))
    assert opkit.doctor(smoke=False, file=None)["checks"]  # file=None prints nothing


def test_the_extension_ships_type_stubs_and_docstrings():
    """_opkit.pyi (nanobind's stubgen at build time) sits beside the extension and py.typed, and the
    classes a user meets first say what they are."""
    from pathlib import Path

    package = Path(opkit.__file__).parent
    assert (package / "py.typed").is_file()
    stub = (package / "_opkit.pyi").read_text()
    for name in ("class Device", "class Stream", "class Event", "class DeviceAllocation", "def synchronize"):
        assert name in stub, name
    for cls in (opkit.Device, opkit.Stream, opkit.Event, opkit.DeviceAllocation):
        assert cls.__doc__ and len(cls.__doc__) > 40, cls
    for fn in (opkit.memset_d8, opkit.memset_d16, opkit.memset_d32, opkit.RawKernel, opkit.RawModule):
        assert fn.__doc__, fn
