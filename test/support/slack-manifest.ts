import { z } from 'zod';

/**
 * The app manifest as Slack documents it for a Bolt app (`_metadata.major_version: 1`), written
 * out for the parts this bot uses, so a manifest Slack would refuse fails a test instead of the
 * person pasting it. Sources (docs/slack.md#manifest quotes them):
 *
 * - docs.slack.dev/reference/app-manifest (the fields, which manifest version has each);
 * - slackapi/manifest-schema, `schemas/manifest.schema.1.0.0.json` (the v1 JSON schema Slack
 *   publishes: lengths, counts, the parameter types, `additionalProperties: false`);
 * - docs.slack.dev/tools/bolt-js/tutorials/custom-steps (a step's `title` at most 255
 *   characters, its callback id at most 100; `is_required` is the v1 form; `function_runtime:
 *   remote`; the app org-ready);
 * - slack-samples/bolt-ts-custom-step-template `manifest.json` (a v1 step: each parameter a key
 *   of `input_parameters` / `output_parameters`, with `type`, `title`, `description`,
 *   `is_required`, `hint`).
 *
 * Strict objects: a key Slack's v1 schema does not have (such as the v2 `properties` /
 * `required` wrapper of a step's parameters) is refused, as Slack refuses it.
 */

const text = (min: number, max: number) => z.string().min(min).max(max);
const httpsUrl = z
  .string()
  .regex(/^https:\/\//)
  .max(3000);

/** The parameter types of a v1 step (manifest.schema.1.0.0.json, `slack-functions.parameter`). */
const PARAMETER_TYPES = [
  'integer',
  'number',
  'boolean',
  'string',
  'object',
  'array',
  'slack#/types/user_context',
  'slack#/types/user_permission',
  'slack#/types/user_id',
  'slack#/types/channel_id',
  'slack#/types/usergroup_id',
  'slack#/types/timestamp',
  'slack#/types/blocks',
  'slack#/types/credential/oauth2',
  'slack#/types/date',
  'slack#/types/interactivity',
  'slack#/types/rich_text',
  'slack#/types/form_input',
  'slack#/types/form_input_object',
  'slack#/types/message_ts',
  'slack#/types/message_context',
] as const;

/** One input or output of a step: a key of the parameters map, described by this. */
const parameter = z.strictObject({
  type: z.enum(PARAMETER_TYPES),
  title: text(1, 255).optional(),
  description: z.string().min(1).optional(),
  is_required: z.boolean().optional(),
  is_hidden: z.boolean().optional(),
  hint: z.string().min(1).optional(),
});

/** v1: a flat map of parameter name → parameter, at most 50 (`app-manifests.v1.hermes.types`). */
const parameters = z
  .record(z.string().min(1), parameter)
  .refine((map) => Object.keys(map).length <= 50, 'at most 50 parameters');

/** Both maps and the description are required in v1 (no length limit is documented for it). */
const step = z.strictObject({
  title: text(1, 255),
  description: z.string().min(1),
  input_parameters: parameters,
  output_parameters: parameters,
});

const slashCommand = z.strictObject({
  command: z.string().regex(/^\/[a-z0-9_-]{1,31}$/),
  url: httpsUrl.optional(),
  description: text(1, 2000),
  usage_hint: text(1, 1000).optional(),
  should_escape: z.boolean().optional(),
});

const shortcut = z.strictObject({
  name: text(1, 24),
  type: z.enum(['message', 'global']),
  callback_id: text(1, 255),
  description: text(1, 150),
});

const SLACK_MANIFEST_V1 = z
  .strictObject({
    _metadata: z.strictObject({ major_version: z.literal(1), minor_version: z.number().int() }),
    display_information: z.strictObject({
      name: text(1, 35),
      description: text(1, 140).optional(),
      background_color: z
        .string()
        .regex(/^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/)
        .optional(),
      long_description: text(175, 4000).optional(),
    }),
    features: z.strictObject({
      app_home: z
        .strictObject({
          home_tab_enabled: z.boolean().optional(),
          messages_tab_enabled: z.boolean().optional(),
          messages_tab_read_only_enabled: z.boolean().optional(),
        })
        .optional(),
      bot_user: z.strictObject({ display_name: text(1, 80), always_online: z.boolean().optional() }),
      shortcuts: z.array(shortcut).min(1).max(10).optional(),
      slash_commands: z.array(slashCommand).min(1).max(50).optional(),
      unfurl_domains: z
        .array(
          z
            .string()
            .regex(/^(?![.-])[-a-z0-9.]+[a-z0-9]$/)
            .max(255),
        )
        .min(1)
        .max(5)
        .optional(),
      // Work Objects (docs.slack.dev/messaging/work-objects-implementation).
      rich_previews: z
        .strictObject({
          is_active: z.boolean(),
          entity_types: z.array(z.string().regex(/^slack#\/entities\/[a-z_]+$/)).min(1),
        })
        .optional(),
    }),
    oauth_config: z.strictObject({
      redirect_urls: z.array(httpsUrl).max(1000).optional(),
      scopes: z.strictObject({ bot: z.array(text(1, 50)).max(255) }),
    }),
    settings: z.strictObject({
      event_subscriptions: z.strictObject({
        request_url: httpsUrl.optional(),
        bot_events: z.array(text(1, 50)).max(100),
      }),
      interactivity: z.strictObject({ is_enabled: z.boolean(), request_url: httpsUrl.optional() }),
      org_deploy_enabled: z.boolean(),
      function_runtime: z.literal('remote').optional(),
      socket_mode_enabled: z.boolean(),
      token_rotation_enabled: z.boolean(),
    }),
    functions: z
      .record(z.string().min(1).max(100), step)
      .refine((map) => Object.keys(map).length <= 50, 'at most 50 steps')
      .optional(),
  })
  .superRefine((manifest, ctx) => {
    const issue = (message: string) => ctx.addIssue({ code: 'custom', message });
    // A Work Object's side panel is asked for with this event, and its buttons are interactivity.
    if (manifest.features.rich_previews?.is_active) {
      if (!manifest.settings.event_subscriptions.bot_events.includes('entity_details_requested'))
        issue('Work Objects need the entity_details_requested event');
      if (!manifest.settings.interactivity.is_enabled) issue('Work Objects need interactivity on');
    }
    if (!manifest.functions) return;
    // A Bolt app's step runs on the app's own servers and needs an org-ready app
    // (docs.slack.dev/tools/bolt-js/tutorials/custom-steps).
    if (manifest.settings.function_runtime !== 'remote')
      issue('a Bolt app with functions needs settings.function_runtime: remote');
    if (!manifest.settings.org_deploy_enabled)
      issue('custom steps need an org-ready app: settings.org_deploy_enabled: true');
    if (!manifest.settings.event_subscriptions.bot_events.includes('function_executed'))
      issue('custom steps arrive as the function_executed event: subscribe to it');
  });

/** Slack's answer to a manifest, as a list of what it would refuse (empty: accepted). */
export function manifestProblems(manifest: unknown): string[] {
  const result = SLACK_MANIFEST_V1.safeParse(manifest);
  return result.success
    ? []
    : result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
}
