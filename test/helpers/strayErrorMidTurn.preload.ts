// `node --import` this into the test build's CLI (testBuild.ts): A FORCED FAULT for tests. The first piece of a
// reply schedules an error that nothing catches (as a throwing listener or a forgotten promise
// would), while the conversation's session is open and the reply still streams.
// (StreamingReply imports no module with side effects: node-llama-cpp runs its binary checks in
// processes started with this process's Node flags, this preload included.)
import {StreamingReply} from "../../src/core/node/turns/StreamingReply.js";

const realAppend = StreamingReply.prototype.append;
let thrown = false;
StreamingReply.prototype.append = function (this: StreamingReply, ...args: Parameters<StreamingReply["append"]>) {
    if (!thrown) {
        thrown = true;
        setImmediate(() => {
            throw new Error("forced by the test: an error no command awaits, thrown mid-turn");
        });
    }
    return realAppend.apply(this, args);
};
