import {coreCalls} from "../api/index.js";
import {largestJsonBytes} from "./largestJsonBytes.js";

/**
 * Room for birpc's envelope around a call's input: `{"m":"call","a":["<method>",…],"i":"<id>","t":"q"}`.
 * The id is birpc's 21-character nanoid; a few hundred bytes are plenty, this is generous.
 */
const envelopeBytes = 4096;

/**
 * The largest message a client may send to the core: the largest input any call of the contract
 * accepts, JSON-encoded with every string character escaped, plus the envelope. A transport
 * with a size limit (web mode's WebSocket) uses this, so that no valid call is ever cut.
 */
export const maxRpcMessageBytes = envelopeBytes + Math.max(...Object.values(coreCalls).map((call) => largestJsonBytes(call.input)));
