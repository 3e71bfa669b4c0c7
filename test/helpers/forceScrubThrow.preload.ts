// `node --import` this into a spawned CLI: every scrub in that process throws (see forceScrubThrow.ts).
import {forceScrubThrows} from "./forceScrubThrow.js";

forceScrubThrows();
