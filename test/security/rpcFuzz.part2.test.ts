import {registerCallFuzz} from "./helpers/rpcFuzzHarness.js";

/** The API under fuzz, second half of the calls (see rpcFuzz.test.ts and helpers/rpcFuzzHarness.ts). */
registerCallFuzz({part: 1, parts: 2});
