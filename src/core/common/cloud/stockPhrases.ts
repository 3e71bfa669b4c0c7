import shipped from "./stockPhrases.json" with {type: "json"};

/**
 * The shipped stock phrases (`stockPhrases.json`): common English runs of 8 or more words that
 * honest replies and the user's conversations share, so that they never block a reply as
 * another conversation's text. Data, not code: extend the JSON file.
 */
export const stockPhrases: readonly string[] = Object.freeze([...shipped.phrases]);
