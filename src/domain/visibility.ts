/** Who sees a reply: only the person who asked, or everyone in the conversation. */
export type Visibility = 'ephemeral' | 'in_channel';
