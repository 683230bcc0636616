/**
 * The ids Slack sends back when someone clicks one of the bot's buttons, runs its message
 * shortcut or submits its modal. Views put them on the blocks they draw; the one list of routes
 * (src/listeners/routes.ts) pairs each with its handler. They live here, below both, because
 * views may not import listeners (the layers of test/architecture.test.ts). An id that no view
 * draws is declared beside its handler instead (the workflow step's, listeners/functions/).
 */

/** The invoice card's buttons (views/invoice.ts, views/shortcut.ts, the watch lists). */
export const ACTION_REFRESH = 'refresh_invoice';
export const ACTION_OPEN_PAYMENT_PAGE = 'open_payment_page';
export const ACTION_WATCH = 'watch_invoice';
export const ACTION_STOP_WATCH = 'stop_watch';
export const ACTION_SHARE = 'share_invoice';

/** The message shortcut "Check payment" (the manifest's `callback_id`). */
export const SHORTCUT_CHECK_PAYMENT = 'check_payment';

/** Many workspaces' payment account: the Home tab's buttons and the modal that takes the key. */
export const ACTION_CONNECT = 'connect_payment_account';
export const ACTION_DISCONNECT = 'disconnect_payment_account';
export const VIEW_PAYMENT_ACCOUNT = 'payment_account';

/** The App Home's chart of one coin: the select menu choosing the coin (views/home-trend.ts). */
export const ACTION_HOME_COIN = 'home_trend_coin';
/** The invoice side panel's buttons (a Work Object's flexpane, views/invoice-entity.ts). */
export const ACTION_ENTITY_REFRESH = 'entity_refresh_invoice';
export const ACTION_ENTITY_WATCH = 'entity_watch_invoice';
export const ACTION_ENTITY_STOP_WATCH = 'entity_stop_watch';
/** A payments feed's Settings button (its confirmation, `/balance subscriptions`, the App Home) and its modal. */
export const ACTION_FEED_SETTINGS = 'feed_settings';
export const VIEW_FEED_SETTINGS = 'feed_settings';
