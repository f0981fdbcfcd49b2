"""Checkpoint averaging for bench/recipe.sh (docs/TRAINING.md "A recipe for a short budget"): the
element-wise mean of the weights of several tfm checkpoints of one run, as Vaswani et al. 2017
§6.1 do with their last 5 (base) or 20 (big) checkpoints. tfm has no `tfm average` yet; this is the
measurement's stand-in.

    /usr/bin/python3 bench/recipe_average.py OUT.safetensors IN1.safetensors IN2.safetensors ...

Every F32 model tensor is averaged (in float64, written as float32); the tokenizer.* tensors and
the header metadata (model configuration) come from the last input; train_state.* (Adam moments,
step, RNG, data position) is dropped, so the output is a plain model for `tfm eval`/`translate`,
not a resumable checkpoint. Fails if the inputs do not have the same tensor names and shapes."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import st_io  # noqa: E402  (tests/reference/st_io.py: the repository's one safetensors reader/writer)
import torch  # noqa: E402


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: recipe_average.py OUT.safetensors IN1.safetensors IN2.safetensors ...")
    out_path, in_paths = argv[0], argv[1:]
    models = [st_io.load(p) for p in in_paths]
    last, meta = models[-1]
    out = {}
    for name, t in last.items():
        if name.startswith("train_state."):
            continue
        if name.startswith("tokenizer.") or t.dtype != torch.float32:
            out[name] = t
            continue
        acc = torch.zeros(t.shape, dtype=torch.float64)
        for path, (tensors, _) in zip(in_paths, models):
            u = tensors.get(name)
            if u is None or u.shape != t.shape:
                sys.exit(f"recipe_average.py: {path} has no tensor {name} of shape {list(t.shape)}")
            acc += u.double()
        out[name] = (acc / len(models)).float()
    st_io.save(out_path, out, meta)


if __name__ == "__main__":
    main(sys.argv[1:])
