import {CleanroomError} from "../core/common/errors.js";

/** Longest value echoed back; a longer one is cut, with its length said. */
const shownChars = 40;

/** A command-line value the core would refuse: which flag, what was given, and the rule it breaks. */
export class InvalidOptionError extends CleanroomError {
    public readonly option: string;
    public readonly rule: string;

    /**
     * @param rule - what the value must be or why it is refused, as the end of a sentence:
     * "a whole number from 1 to 32768", "an id cannot be empty".
     * @param options.mustBe - `rule` names what the value must be (else it says why it is refused).
     * @param options.private - never echo the value (a prompt): only its length is reported.
     */
    public constructor(option: string, given: string, rule: string, {mustBe = false, private: isPrivate = false} = {}) {
        const cut = given.length > shownChars ? `${given.slice(0, shownChars)}…` : given;
        const shown = isPrivate ? `(${given.length} characters)` : `${JSON.stringify(cut)}${cut !== given ? ` (${given.length} characters)` : ""}`;
        super(
            "INVALID_INPUT",
            `${option} ${shown} is refused: ${mustBe ? `it must be ${rule}` : rule}.`,
            isPrivate ? {option, length: given.length, rule} : {option, value: cut, length: given.length, rule}
        );
        this.name = "InvalidOptionError";
        this.option = option;
        this.rule = rule;
    }
}
