/**
 * Review-like sentences of varied length (5–30 tokens), positive, negative, negated and neutral,
 * cycled by every configuration so each one sees the same inputs in the same order.
 */
export const SENTENCES: readonly string[] = [
  'This is a fantastic technical article.',
  'I am not impressed with the performance.',
  'The service was slow and the staff were rude.',
  'Absolutely loved it, would recommend to anyone looking for a great weekend read.',
  'Not bad at all.',
  'The update broke everything and support never answered my emails, which was really frustrating.',
  'It works.',
  'What a wonderful surprise, the team did an amazing job on this release!',
  'I do not like the new interface, it feels cluttered and confusing compared to the old one.',
  'The documentation is clear and the examples are helpful.',
  'Terrible battery life.',
  'The concert was good but the sound quality in the back rows was poor and the crowd was noisy.',
  'Honestly, this is the best purchase I have made all year.',
  'The package arrived on Tuesday.',
  'I never thought a simple tool could save me so much time every single day.',
  'The plot was boring and the ending made no sense.',
];
