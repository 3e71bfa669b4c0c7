import {describe, expect, it} from "vitest";
import {unfollowedJsonSchemaPart} from "../../src/core/node/engine/unfollowedJsonSchemaPart.js";

describe("unfollowedJsonSchemaPart: what a response_format schema asks that node-llama-cpp's JSON grammar would silently ignore", () => {
    it("accepts the schemas the grammar follows, nested, with $defs and $ref", () => {
        expect(unfollowedJsonSchemaPart({
            type: "object", title: "Verdict", $defs: {stars: {type: "integer"}},
            properties: {
                answer: {enum: ["yes", "no"]}, stars: {$ref: "#/$defs/stars"}, when: {type: "string", format: "date"},
                tags: {type: "array", items: {type: ["string", "null"], maxLength: 20}, maxItems: 3},
                either: {oneOf: [{const: 1}, {type: "boolean"}]}
            },
            required: ["answer"], additionalProperties: false
        })).toBeNull();
    });

    it("names the first part it would not follow, by its path", () => {
        expect(unfollowedJsonSchemaPart({type: "wat"})).toBe("schema.type: \"wat\" is not a type the JSON grammar knows (string, number, integer, boolean, null, object, array)");
        expect(unfollowedJsonSchemaPart({type: "object", properties: {code: {type: "string", pattern: "^[A-Z]+$"}}}))
            .toMatch(/^schema\.properties\.code\.pattern: "pattern" is not followed by the JSON grammar/);
        expect(unfollowedJsonSchemaPart({anyOf: [{type: "string"}]})).toMatch(/^schema\.anyOf: "anyOf" is not followed/);
        expect(unfollowedJsonSchemaPart({type: "string", format: "email"})).toBe("schema.format: \"email\" is not followed (only date-time, time, date)");
        expect(unfollowedJsonSchemaPart({type: "array", prefixItems: [{type: "string"}, {$ref: "#/$defs/missing"}]}))
            .toBe("schema.prefixItems.1.$ref: \"#/$defs/missing\" does not name a schema of $defs (#/$defs/<name>)");
        expect(unfollowedJsonSchemaPart({type: "object", properties: {a: "string"}})).toBe("schema.properties.a: a schema must be an object");
    });
});
