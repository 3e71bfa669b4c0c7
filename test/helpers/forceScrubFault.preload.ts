// `node --import` this into a spawned CLI or web mode (compiled with it: test/setup/testBundle.ts, test/helpers/testBuild.ts): every scrub in that process is a forced fault (see forceScrubFault.ts).
import {forceScrubFaults} from "./forceScrubFault.js";

forceScrubFaults();
