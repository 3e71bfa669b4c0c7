// `node --import` this into a spawned web mode (compiled with it: test/setup/testBundle.ts) or CLI (test/helpers/testBuild.ts): the GPU device's isolation probe fails (see forceDeviceProbeFault.ts).
import {forceDeviceProbeFault} from "./forceDeviceProbeFault.js";

forceDeviceProbeFault();
