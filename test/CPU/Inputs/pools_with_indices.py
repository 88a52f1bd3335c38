"""Max pools that also return where each window's max was (`return_indices=True`, as SegNet's and
U-Net variants' unpooling reads them), over an input 15x17 of small integers: windows hold ties, and
the index is the first of them in the window's row-major order, as eager's. Padding, none, dilation
with ceil_mode, and 1-D. The indices are computed from the padded input in torch-mlir's lowering;
--fusec-extracts-through-pads reads them from the input itself. Two neighbouring elements are NaN:
the windows holding one have a NaN max at its index, and a window holding both takes the last, as
eager's loop does (--fusec-max-index-nans)."""
import torch

torch.manual_seed(0)


def pools(x):
    f = torch.nn.functional
    return (*f.max_pool2d(x, 3, 2, 1, return_indices=True), *f.max_pool2d(x, 2, return_indices=True),
            *f.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True, return_indices=True),
            *f.max_pool1d(x.flatten(2), 3, 2, 1, return_indices=True))


model = pools
x = torch.randint(-3, 4, (2, 8, 15, 17)).float()
x[0, 0, 4, 5:7] = float("nan")  # NaN maxima (--fusec-max-index-nans); the 3x3 windows at (2, 3) hold both
example_inputs = (x,)
