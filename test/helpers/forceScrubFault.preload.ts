// `node --import` this into a spawned CLI: every scrub in that process is a forced fault (see forceScrubFault.ts).
import {forceScrubFaults} from "./forceScrubFault.js";

forceScrubFaults();
