// `node --import` this into a spawned web mode (compiled with it: test/setup/testBundle.ts) or CLI (test/helpers/testBuild.ts): the proof that the scrub's read-back reads the KV from the GPU fails (see forceDeviceReadBackFault.ts).
import {forceDeviceReadBackFault} from "./forceDeviceReadBackFault.js";

forceDeviceReadBackFault();
