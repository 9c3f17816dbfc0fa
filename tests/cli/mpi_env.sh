# Sourced by tests/cli/test_mpi_*.sh after they cd into their own temporary folder: skips (exit
# 77) without mpirun or without MPI in this opkit, and defines run_mpi NP COMMAND... with what CI
# needs (root, 2 cores, no network, tests running side by side), and check LABEL COMMAND... with
# the pass/failure counters the tests report at the end.
command -v mpirun >/dev/null || { echo "skip: no mpirun (install openmpi-bin)"; exit 77; }
# CI runs as root; OpenMPI refuses that unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid the cross-memory attach that OpenMPI's shared-memory transport tries.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Each test keeps mpirun's session files in its own folder: tests run in parallel, and mpiruns
# started at the same moment can race on the shared /tmp/ompi.* tree.
mkdir -p "$PWD/ompi"
export OMPI_MCA_orte_tmpdir_base="$PWD/ompi" TMPDIR="$PWD/ompi"
run_mpi() {  # run_mpi NP COMMAND...
  local np=$1; shift
  mpirun --oversubscribe --bind-to none -np "$np" "$@"
}
probe=$(run_mpi 1 "$opkit" mine --data probe --difficulty 1 --device host --quiet 2>&1 </dev/null)
case $probe in
  *"built without MPI"*) echo "skip: this opkit was built without MPI"; exit 77 ;;
  *"nonce "*) ;;
  *) echo "FAIL: mpirun -np 1 opkit mine does not work:"; echo "$probe" | head -20; exit 1 ;;
esac

failures=0
pass=0

check() {  # check LABEL CONDITION-COMMAND...
  local label=$1; shift
  if "$@"; then pass=$((pass + 1)); else failures=$((failures + 1)); echo "FAIL: $label"; fi
}
