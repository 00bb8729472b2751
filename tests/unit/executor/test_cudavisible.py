"""executor/cudavisible.py: which GPUs a CUDA_VISIBLE_DEVICES value lets CUDA see, as CUDA reads it (the cases
of CUDA's documentation and of PyTorch's tests of its own reading, written to agree with CUDA's)."""
import pytest

from vclite.executor import cudavisible

UUIDS = ("GPU-9942190a-aa31-4ff1-4aa9-c388d80f85f1", "GPU-9e8d35e3-a134-0fdd-0e01-23811fdbd293",
         "GPU-e429a63e-c61c-4795-b757-5132caeb8e70", "GPU-eee1dfbc-0a0f-6ad8-5ff6-dc942a8b9d98")
FOUR = ("0", "1", "2", "3")   # a host whose GPUs' UUIDs are unknown


@pytest.mark.parametrize("value, gpus, expected", [
    pytest.param("2,1", UUIDS, ("2", "1"), id="indices in the order written"),
    pytest.param("0,2,-1,1", UUIDS, ("0", "2"), id="ends at -1 (CUDA's documented example)"),
    pytest.param("-1", UUIDS, (), id="-1 hides every GPU"),
    pytest.param("", UUIDS, (), id="empty hides every GPU"),
    pytest.param("1,5,0", UUIDS, ("1",), id="ends at an index past the last GPU"),
    pytest.param("4", UUIDS, (), id="only an index past the last GPU"),
    pytest.param("0, 1, 2, -1, 3", FOUR, ("0", "1", "2"), id="blanks around"),
    pytest.param("1gpu2,2ampere", FOUR, ("1", "2"), id="strtoul: the leading digits"),
    pytest.param("2, +3, -0, 1", FOUR, ("2", "3", "0", "1"), id="strtoul: signs"),
    pytest.param("01", FOUR, ("1",), id="a leading zero"),
    pytest.param("one,two,3", FOUR, (), id="a word first: none"),
    pytest.param("3,2,two,one", FOUR, ("3", "2"), id="a word ends the list"),
    pytest.param("0,,1", FOUR, ("0",), id="an empty entry ends the list"),
    pytest.param("0,GPU-9e8d35e3", UUIDS, ("0",), id="a UUID after indices ends the list"),
    pytest.param("0,1,2,1", FOUR, (), id="an index twice: none at all"),
    pytest.param("GPU-9e8d35e3", UUIDS, (UUIDS[1],), id="an abbreviated UUID"),
    pytest.param("GPU-e4,GPU-9e8d35e3", UUIDS, (UUIDS[2], UUIDS[1]), id="UUIDs in the order written"),
    pytest.param(UUIDS[3], UUIDS, (UUIDS[3],), id="a whole UUID"),
    pytest.param("GPU-9e8d35e3, 2", UUIDS, (UUIDS[1],), id="an index after UUIDs ends the list"),
    pytest.param("GPU-123,GPU-9e8d35e3", UUIDS, (), id="a UUID no GPU has first: none"),
    pytest.param("GPU-9e8d35e3,GPU-123,GPU-e4", UUIDS, (UUIDS[1],), id="ends at a UUID no GPU has"),
    pytest.param("GPU-9e8d35e3,GPU-e,GPU-99", UUIDS, (UUIDS[1],), id="ends at an ambiguous UUID"),
    pytest.param("GPU-9e8d35e3,GPU-e4,GPU-9e8", UUIDS, (), id="a GPU named twice by UUID: none at all"),
    pytest.param("GPU-9E8D35E3", UUIDS, (), id="UUIDs are compared as written"),
    pytest.param("GPU-aaa,GPU-bbb", FOUR, ("GPU-aaa", "GPU-bbb"), id="unknown UUIDs: taken as written"),
    pytest.param("MIG-89c850dc,MIG-1234", UUIDS, ("MIG-89c850dc", "MIG-1234"), id="MIG ids as written"),
    pytest.param("MIG-GPU-9e8d35e3/1/2,0", UUIDS, ("MIG-GPU-9e8d35e3/1/2",), id="an index after MIG ids ends it"),
    pytest.param("MIG-a,MIG-a", UUIDS, (), id="a MIG id twice: none at all"),
    pytest.param("0", (), (), id="a host without GPUs: none"),
    pytest.param("GPU-9e8d35e3", (), (), id="a host without GPUs: no UUID either"),
])
def test_visible_as_cuda_reads_it(value, gpus, expected):
    assert cudavisible.visible(value, gpus) == expected
