# SPDX-License-Identifier: Apache-2.0
"""kjit_attention_args (runtime/include/kjit/kjit.h) as a ctypes struct, without torch, so that its
layout can be printed and checked against the C header on a machine without a GPU."""
import ctypes

TENSORS = ("q", "k", "v", "o")


class AttentionArgs(ctypes.Structure):
    """struct_size carries sizeof(kjit_attention_args) so that the struct can grow."""
    _fields_ = ([("struct_size", ctypes.c_size_t)] +
                [(name, ctypes.c_void_p) for name in TENSORS + ("bias", "mask")] +
                [(name, ctypes.c_int64) for name in ("batch", "heads", "m", "n", "d", "dv",
                                                     "mask_windows")] +
                [(f"{name}_strides", ctypes.c_int64 * 3) for name in TENSORS] +
                [("bias_strides", ctypes.c_int64 * 2), ("mask_strides", ctypes.c_int64 * 2),
                 ("dtype", ctypes.c_int), ("bias_dtype", ctypes.c_int), ("mask_dtype", ctypes.c_int),
                 ("scale", ctypes.c_float), ("causal", ctypes.c_int)])


def layout():
    """'name offset' lines and the size, to compare with offsetof() from the C header."""
    lines = [f"{name} {getattr(AttentionArgs, name).offset}" for name, _ in AttentionArgs._fields_]
    return lines + [f"sizeof {ctypes.sizeof(AttentionArgs)}"]


if __name__ == "__main__":
    print("\n".join(layout()))
