import fc from "fast-check";
import {describe, expect, it} from "vitest";
import {CleanroomError, ContextOverflowError} from "../../src/core/common/errors.js";
import {ConversationPolicySchema, RouteRequestSchema} from "../../src/core/common/types.js";
import {chooseRoute, type RouteFacts} from "../../src/core/node/routing/chooseRoute.js";

const noModel = new CleanroomError("MODEL_NOT_LOADED", "No model is loaded.");
const cloudReady = {policy: "cloud-allowed", cloudFallback: true, cloudConfigured: true} as const;

function route(facts: Partial<RouteFacts>) {
    return chooseRoute({...cloudReady, requested: "auto", localProblem: null, ...facts});
}

describe("where a turn goes", () => {
    it("a local-only conversation never goes to the network, whatever else is set", () => {
        const facts = fc.record({
            cloudFallback: fc.boolean(),
            cloudConfigured: fc.boolean(),
            requested: fc.constantFrom(...RouteRequestSchema.options),
            localProblem: fc.constantFrom(null, noModel, new ContextOverflowError(300, 64, 256))
        });
        fc.assert(fc.property(facts, (drawn) => {
            try {
                expect(chooseRoute({...drawn, policy: "local"}).route).toBe("local");
            } catch (error) {
                expect(error).toBeInstanceOf(CleanroomError);
            }
        }));
        expect(() => route({policy: "local", requested: "cloud"})).toThrow(expect.objectContaining({code: "CLOUD_DISABLED", message: expect.stringContaining("local only")}));
        expect(() => route({policy: "local", localProblem: noModel})).toThrow(noModel);
    });

    it("a turn the local engine can serve stays local, even where the cloud is allowed", () => {
        expect(route({})).toEqual({route: "local", reason: "the local engine serves this turn"});
    });

    it("with the cloud allowed, switched on and set up, a turn the local engine cannot serve goes to the cloud, saying why", () => {
        expect(route({localProblem: noModel})).toEqual({route: "cloud", reason: "no local model is loaded"});
        expect(route({localProblem: new ContextOverflowError(300, 64, 256)}))
            .toEqual({route: "cloud", reason: "the turn does not fit the local context (108 tokens over)"});
    });

    it("the cloud is used only with the conversation's permission and the global switch both on, and an endpoint set", () => {
        for (const [facts, says] of [
            [{cloudFallback: false}, "switched off"],
            [{cloudConfigured: false}, "No cloud endpoint"],
            [{policy: ConversationPolicySchema.enum.local}, "local only"]
        ] as const) {
            expect(() => route({...facts, requested: "cloud"})).toThrow(expect.objectContaining({code: "CLOUD_DISABLED", message: expect.stringContaining(says)}));
            expect(() => route({...facts, localProblem: noModel}), "auto falls back to nothing: the local problem is reported").toThrow(noModel);
        }
    });

    it("a turn asked for locally is never sent to the cloud: the local problem is reported instead", () => {
        expect(() => route({requested: "local", localProblem: noModel})).toThrow(noModel);
        expect(route({requested: "cloud"})).toEqual({route: "cloud", reason: "the user asked for the cloud"});
    });
});
