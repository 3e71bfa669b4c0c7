import {describe, expect, it} from "vitest";
import * as z from "zod";
import {describeZodIssues, longestProblem} from "../../src/core/common/describeZodIssues.js";

describe("describeZodIssues", () => {
    it("describes each issue as `path: message`", () => {
        const result = z.strictObject({title: z.string()}).safeParse({title: 1});
        expect(describeZodIssues(result.error!.issues)).toEqual(["title: Invalid input: expected string, received number"]);
    });

    it("does not echo a huge unknown key back: a problem is cut at longestProblem, never inside a surrogate pair", () => {
        const key = "😀".repeat(200_000);
        const [problem] = describeZodIssues(z.strictObject({}).safeParse({[key]: 1}).error!.issues);
        expect(problem!.startsWith("Unrecognized key: \"😀😀")).toBe(true);
        expect(problem!.length).toBeLessThanOrEqual(longestProblem + 1);
        expect(problem!.endsWith("…")).toBe(true);
        expect(problem!.charCodeAt(problem!.length - 2).toString(16), "a lone high surrogate before the ellipsis").toBe("de00");
        const short = describeZodIssues(z.strictObject({}).safeParse({extra: 1}).error!.issues);
        expect(short).toEqual(["Unrecognized key: \"extra\""]);
    });
});
