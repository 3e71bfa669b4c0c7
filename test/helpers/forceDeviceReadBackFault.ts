import {KvScrubber} from "../../src/core/node/engine/KvScrubber.js";

export const forcedDeviceReadBackProblem = "forced by the test: the device's KV read back as zeros";

/**
 * A FORCED FAULT for tests: the proof that the scrub's read-back reads the KV from the GPU (a token
 * evaluated on the device must read back non-zero) is judged failed, as it would be on a backend
 * whose read-back does not return device memory. Returns the function that undoes it.
 */
export function forceDeviceReadBackFault(): () => void {
    const real = KvScrubber.proveDeviceReadBack.bind(KvScrubber);
    KvScrubber.proveDeviceReadBack = (nonZeroBytesPerLayer, gpuLayers) => ({
        ...real(nonZeroBytesPerLayer.map(() => 0), gpuLayers),
        problem: forcedDeviceReadBackProblem
    });
    return () => {
        KvScrubber.proveDeviceReadBack = real;
    };
}
