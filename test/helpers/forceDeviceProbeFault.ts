import {DeviceProbe} from "../../src/core/node/engine/DeviceProbe.js";

export const forcedDeviceProbeProblem = "forced by the test: the request's probabilities differed after another sequence's canary";

/**
 * A FORCED FAULT for tests: the GPU device's isolation probe (`DeviceProbe`) is judged failed, as it
 * would be on a device where a canary in one sequence reaches another (llama.cpp #28056). The probe
 * itself still runs on the device. Returns the function that undoes it.
 */
export function forceDeviceProbeFault(): () => void {
    const real = DeviceProbe.compare.bind(DeviceProbe);
    DeviceProbe.compare = (reference, afterCanary) => {
        real(reference, afterCanary);
        return {passed: false, problem: forcedDeviceProbeProblem};
    };
    return () => {
        DeviceProbe.compare = real;
    };
}
