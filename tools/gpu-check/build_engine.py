"""gpu-check step 4 (fallback when trtexec is absent): builds a TensorRT 10 engine from the ONNX
add/sub model with one optimization profile (batch 1 / 4 / 8 over [batch, 16]).

    python3 tools/gpu-check/build_engine.py <model.onnx> <model.plan>
"""
import sys

import tensorrt as trt


def main(onnx_path: str, plan_path: str) -> int:
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)  # explicit batch is the only mode in TensorRT 10
    parser = trt.OnnxParser(network, logger)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                print(parser.get_error(i), file=sys.stderr)
            return 1
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    for name in ("INPUT0", "INPUT1"):
        profile.set_shape(name, (1, 16), (4, 16), (8, 16))
    config.add_optimization_profile(profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        print("build_serialized_network failed", file=sys.stderr)
        return 1
    with open(plan_path, "wb") as f:
        f.write(serialized)
    print(f"wrote {plan_path} ({serialized.nbytes} bytes) with TensorRT {trt.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
