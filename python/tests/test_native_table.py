# SPDX-License-Identifier: Apache-2.0
"""_kjit's launch table (python/src/native_api.h), which kjit._torch_ops calls, read through
ctypes as that module reads it: the capsule's name and size, and a call that cannot run (device
-1) returning with its kjit.Error subclass set as the Python exception, whether the caller held
the GIL or not (torch's dispatcher calls it without). Needs neither torch nor a GPU."""
import ctypes

import pytest

import kjit
from kjit import _kjit

I64, PTR = ctypes.c_int64, ctypes.c_void_p
ROWWISE_ARGS = [ctypes.c_int, PTR, I64, PTR, I64, I64, I64, ctypes.c_int, ctypes.c_int, PTR, PTR,
                ctypes.c_int]
TOPK_ARGS = [PTR, I64, I64, I64, ctypes.c_int, ctypes.c_int, PTR, ctypes.c_float, ctypes.c_uint,
             PTR, PTR, ctypes.c_int, PTR, ctypes.c_int]


class Table(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("rowwise", PTR), ("softmax_topk", PTR)]


def table() -> Table:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = PTR, [ctypes.py_object, ctypes.c_char_p]
    return Table.from_address(get(_kjit._native_api(), b"kjit._kjit.native_api"))


def test_the_capsule_holds_the_table_it_names():
    assert table().size == ctypes.sizeof(Table)
    assert table().rowwise and table().softmax_topk
    check = ctypes.pythonapi.PyCapsule_IsValid
    check.restype, check.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    assert check(_kjit._native_api(), b"kjit._kjit.native_api") == 1


def test_a_failed_call_sets_its_kjit_error_with_the_gil_held():
    rowwise = ctypes.PYFUNCTYPE(ctypes.c_int, *ROWWISE_ARGS)(table().rowwise)
    with pytest.raises(kjit.InvalidArgumentError, match="device -1 is out of range") as caught:
        rowwise(0, None, 8, None, 8, 2, 8, 0, 0, None, None, -1)
    assert caught.value.status == "invalid_argument"
    topk = ctypes.PYFUNCTYPE(ctypes.c_int, *TOPK_ARGS)(table().softmax_topk)
    with pytest.raises(kjit.InvalidArgumentError, match="device -1 is out of range"):
        topk(None, 8, 2, 8, 0, 4, None, 1.0, 0, None, None, 4, None, -1)


def test_a_failed_call_takes_the_gil_to_set_its_error():
    # CFUNCTYPE releases the GIL around the call; the error the table set is still there when
    # it returns, so Python reports a result returned with an exception set, caused by it.
    rowwise = ctypes.CFUNCTYPE(ctypes.c_int, *ROWWISE_ARGS)(table().rowwise)
    with pytest.raises(SystemError) as caught:
        rowwise(1, None, 8, None, 8, 2, 8, 0, 0, None, None, -1)
    assert isinstance(caught.value.__cause__, kjit.InvalidArgumentError)
    assert "device -1 is out of range" in str(caught.value.__cause__)
