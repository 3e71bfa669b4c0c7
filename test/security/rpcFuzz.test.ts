import {registerCallFuzz} from "./helpers/rpcFuzzHarness.js";

/**
 * The API under fuzz, first half of the calls (by index in the contract), plus the checks that
 * every call's input is a strict object and that unknown method names are refused. The claim,
 * the generators and the oracles are described in helpers/rpcFuzzHarness.ts; the other half is
 * rpcFuzz.part2.test.ts, the events rpcEventsFuzz.test.ts. Counts are printed at the end.
 */
registerCallFuzz({part: 0, parts: 2});
