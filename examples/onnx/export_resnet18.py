#!/usr/bin/python3
"""export_resnet18.py [DIR] — writes torchvision's resnet18 (random weights,
weights=None: nothing is downloaded) as DIR/resnet18.onnx, an input image
batch DIR/x.npy and PyTorch's output for it DIR/expected.npy, for the
walk-through in examples/README.md.  Needs python3-torch, -torchvision and
-onnx (`make test` installs them)."""
import os
import sys

import numpy as np
import torch
import torchvision

d = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(d, exist_ok=True)
torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(1, 3, 224, 224)
torch.onnx.export(model, x, os.path.join(d, "resnet18.onnx"), input_names=["x"],
                  output_names=["logits"], opset_version=13)
np.save(os.path.join(d, "x.npy"), x.numpy())
with torch.no_grad():
    np.save(os.path.join(d, "expected.npy"), model(x).numpy())
print(f"wrote {d}/resnet18.onnx, x.npy, expected.npy")
