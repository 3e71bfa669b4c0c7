// `node --import` this into a spawned CLI run from source, or web mode (compiled with it: test/setup/testBundle.ts): every scrub in that process is a forced fault (see forceScrubFault.ts).
import {forceScrubFaults} from "./forceScrubFault.js";

forceScrubFaults();
