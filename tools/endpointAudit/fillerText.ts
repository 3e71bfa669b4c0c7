const sentences = [
    "Please review the attached contract before Friday and send your comments to the legal team.",
    "The quarterly budget for the garden project is higher than we planned in the spring.",
    "My daughter starts at the new school next week, and the bus leaves at seven thirty.",
    "Remember to renew the car insurance; the policy number is on the last statement.",
    "The function parses the configuration file and returns a map of settings to values.",
    "We moved the meeting with the accountant to Thursday afternoon at the usual office.",
    "The doctor said the test results look fine and the next check is in six months.",
    "Dinner at my parents' house on Sunday, bring the photos from the summer trip.",
    "The deployment failed because the database migration ran before the new schema was ready.",
    "Grandmother's recipe needs two cups of flour, three eggs and a pinch of salt."
];

/** Realistic, varied text of about `chars` characters (shuffled sentences with numbers), for leak probes. */
export function fillerText(random: () => number, chars: number): string {
    let text = "";
    while (text.length < chars) {
        const sentence = sentences[Math.floor(random() * sentences.length)]!;
        text += `${sentence} Item ${Math.floor(random() * 100000)}. `;
    }
    return text.slice(0, chars);
}

/** A repeatable sequence of numbers in [0, 1) from a seed (a linear congruential generator). */
export function seededRandom(seed: number) {
    let state = seed >>> 0;
    return () => {
        state = (state * 1664525 + 1013904223) >>> 0;
        return state / 2 ** 32;
    };
}
