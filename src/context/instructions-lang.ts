// The detector's phrases in languages other than English (docs/gate.md#output-screening
// lists them). One entry per language, the same four structures as the English rules:
//   override   an order to drop earlier instructions ("ignore your previous instructions")
//   addressed  the text names the agent as its addressee ("dear AI", "to the assistant")
//   hide       an order to keep something from the user ("do not tell the user")
//   preempt    an order to do something else first or instead ("do the following instead")
// Each entry is a RegExp source matched case-insensitively on normalised text; the sources
// are folded like the text (foldPattern), so a phrase is compared letter class to letter
// class whatever script the attacker mixes in. Gaps are bounded (linear-time matching).

export const SCREENED_LANGUAGES = ["de", "fr", "es", "it", "pt", "nl", "zh", "ja", "ru"] as const;
export type ScreenedLanguage = (typeof SCREENED_LANGUAGES)[number];

export const LANGUAGE_STRUCTURES = ["override", "addressed", "hide", "preempt"] as const;
export type LanguageStructure = (typeof LANGUAGE_STRUCTURES)[number];

type Phrases = Readonly<Partial<Record<LanguageStructure, string>>>;

// A word gap of at most a few words inside one sentence (Latin script; the CJK entries
// bound their own gaps by the ideographic full stop).
const G = "[^.!?\\n]{0,40}";

export const LANGUAGE_PHRASES: Readonly<Record<ScreenedLanguage, Phrases>> = {
  de: {
    override: `\\b(ignorier|missacht|vergiss|vergessen\\s+sie|verwirf|überspring)\\w*${G}\\b(vorherig|bisherig|früher|vorig|obig|ursprünglich|alle|deine|ihre|sämtlich)\\w*\\s+(anweisung|instruktion|anordnung|befehl|vorgabe|regel|aufgabe)\\w*|\\b(vorherig|bisherig|früher|vorig|obig)\\w*\\s+(anweisung|instruktion|befehl|vorgabe)\\w*${G}\\b(ignorier|vergiss|vergessen|missacht)\\w*`,
    addressed: `\\b(liebe[rs]?|hallo|hey|achtung|an\\s+(die|den|das))\\s+(ki|künstliche\\s+intelligenz|ki-assistent\\w*|assistent\\w*|sprachmodell\\w*|ki-agent\\w*|agent\\w*)\\b`,
    hide: `\\b(sag|erzähl|teil|verrat|erwähn)\\w*\\s+(dem|der|den)\\s+(benutzer|nutzer|anwender)\\w*\\s+(nichts|davon\\s+nichts|nicht)|\\bohne\\s+(den|die)\\s+(benutzer|nutzer|anwender)\\w*\\s+(zu\\s+)?(informieren|benachrichtigen|fragen)`,
    preempt: `\\b(tu|tue|mach|mache|führe?)\\w*\\s+(stattdessen|zuerst|zunächst|vorher)\\s+(folgendes|das\\s+folgende|dies)|\\b(stattdessen|zuerst)\\s+(musst|sollst|solltest)\\s+du\\b|\\bneue\\s+anweisungen?\\s*:`,
  },
  fr: {
    override: `\\b(ignore|oublie|néglige|écarte|passe\\s+outre)\\w*${G}\\b(précédent|antérieur|ci-dessus|initial|toutes|tes|vos)\\w*${G}\\binstructions?\\b|\\binstructions?\\s+(précédent|antérieur)\\w*${G}\\b(ignor|oubli)\\w*`,
    addressed: `\\b(chère?|cher|bonjour|salut|attention|à\\s+l['’]attention\\s+de)\\s+(l['’]\\s*)?(ia|intelligence\\s+artificielle|assistant\\w*|agent\\w*|modèle\\s+de\\s+langage)\\b`,
    hide: `\\bne\\s+(le\\s+|rien\\s+)?(dis|dites|mentionne|mentionnez|révèle|révélez)\\w*\\s+(rien\\s+|pas\\s+)?(à\\s+)?l['’]\\s*utilisat\\w*|\\bsans\\s+(en\\s+)?(informer|prévenir|avertir)\\s+l['’]\\s*utilisat\\w*`,
    preempt: `\\b(fais|faites|effectue|effectuez)\\s+(plutôt|d['’]abord|d['’]\\s*abord)\\s+(ce\\s+qui\\s+suit|les\\s+étapes|ceci)|\\bau\\s+lieu\\s+de\\s+cela\\b|\\bnouvelles\\s+instructions\\s*:`,
  },
  es: {
    override: `\\b(ignora|olvida|descarta|omite|haz\\s+caso\\s+omiso\\s+de)\\w*${G}\\b(anterior|previa|previo|todas|tus|sus|original)\\w*${G}\\b(instrucci[oó]n|indicaci[oó]n|orden|regla)\\w*|\\binstrucciones\\s+(anteriores|previas)${G}\\b(ignor|olvid)\\w*`,
    addressed: `\\b(querida?|querido|estimad[oa]|hola|atenci[oó]n|para\\s+ti,?)\\s+(la\\s+|el\\s+)?(ia|inteligencia\\s+artificial|asistente|agente|modelo\\s+de\\s+lenguaje)\\b`,
    hide: `\\bno\\s+(le\\s+)?(digas|cuentes|informes|menciones|reveles)\\w*\\s+(nada\\s+|esto\\s+)?al\\s+usuario\\b|\\bsin\\s+(informar|avisar|decir)(le)?\\s+al\\s+usuario\\b`,
    preempt: `\\b(haz|realiza|ejecuta)\\s+(primero|en\\s+su\\s+lugar|en\\s+cambio)\\s+(lo\\s+siguiente|esto)|\\ben\\s+lugar\\s+de\\s+eso\\b|\\bnuevas\\s+instrucciones\\s*:`,
  },
  it: {
    override: `\\b(ignora|dimentica|trascura|scarta)\\w*${G}\\b(precedent|anterior|tutte|tue|sue|original)\\w*${G}\\b(istruzion|indicazion|regol|ordin)\\w*`,
    addressed: `\\b(cara|caro|ciao|salve|attenzione|all['’]attenzione\\s+dell['’]?)\\s*(l['’]\\s*)?(ia|intelligenza\\s+artificiale|assistente|agente|modello\\s+linguistico)\\b`,
    hide: `\\bnon\\s+(dire|dirlo|raccontare|menzionare|rivelare)\\w*\\s+(niente\\s+|nulla\\s+)?(all['’]\\s*)utente\\b|\\bsenza\\s+(informare|avvisare)\\s+l['’]\\s*utente\\b`,
    preempt: `\\b(fai|esegui|svolgi)\\s+(prima|invece)\\s+(quanto\\s+segue|questo|le\\s+seguenti)|\\bnuove\\s+istruzioni\\s*:`,
  },
  pt: {
    override: `\\b(ignore|ignora|esqueça|esquece|descarte|desconsidere)\\w*${G}\\b(anterior|prévia|todas|suas|tuas|original)\\w*${G}\\b(instruç|indicaç|ordem|ordens|regra)\\w*`,
    addressed: `\\b(querida?|querido|caro|cara|olá|ola|atenção)\\s+(ia|inteligência\\s+artificial|assistente|agente|modelo\\s+de\\s+linguagem)\\b`,
    hide: `\\bn[aã]o\\s+(diga|conte|informe|mencione|revele)\\w*\\s+(nada\\s+)?(ao|à)\\s+(usuário|utilizador)\\w*|\\bsem\\s+(informar|avisar)\\s+o\\s+(usuário|utilizador)\\b`,
    preempt: `\\b(faça|faz|execute)\\s+(primeiro|em\\s+vez\\s+disso|antes)\\s+(o\\s+seguinte|isto)|\\bem\\s+vez\\s+disso\\b|\\bnovas\\s+instruções\\s*:`,
  },
  nl: {
    override: `\\b(negeer|vergeet|veronachtzaam)\\w*${G}\\b(vorige|eerdere|voorgaande|bovenstaande|alle|je|jouw|uw|oorspronkelijke)\\b${G}\\b(instructie|opdracht|aanwijzing|regel)\\w*`,
    addressed: `\\b(beste|lieve|hallo|hoi|let\\s+op)\\s+(ai|ki|assistent|agent|taalmodel)\\b`,
    hide: `\\b(vertel|zeg|meld)\\s+(dit|het|niets)\\s+(niet\\s+)?(aan|tegen)\\s+de\\s+gebruiker\\b|\\bzonder\\s+de\\s+gebruiker\\s+te\\s+(informeren|vertellen)\\b`,
    preempt: `\\bdoe\\s+(eerst|in\\s+plaats\\s+daarvan)\\s+(het\\s+volgende|dit)|\\bin\\s+plaats\\s+daarvan\\b|\\bnieuwe\\s+instructies\\s*:`,
  },
  zh: {
    override: `(忽略|无视|無視|忘记|忘記|忘掉|放弃|放棄|不要理会|不要理會)[^。！？\\n]{0,12}(之前|以前|先前|上面|上述|前面|所有|原来|原來|原始)[^。！？\\n]{0,8}(指令|指示|说明|說明|命令|规则|規則|任务|任務)`,
    addressed: `(亲爱的|親愛的|致|给|給|你好[,，]?)\\s*(ai|人工智能|助手|智能助手|AI助手|语言模型|語言模型|代理)`,
    hide: `(不要|别|別|切勿)(告诉|告訴|通知|提醒|透露给|透露給)(用户|用戶|使用者)`,
    preempt: `(先|改为|改為|而是)(执行|執行|完成|做)(以下|下面|如下)|新(的)?指令\\s*[:：]|系统(消息|提示)\\s*[:：]`,
  },
  ja: {
    override: `(以前|前|これまで|上記|先|元|最初)の[^。！？\\n]{0,10}(指示|命令|指令|ルール|タスク)[^。！？\\n]{0,6}(を|は)?[^。！？\\n]{0,4}(無視|忘れ|破棄)`,
    addressed: `(ai|人工知能|アシスタント|エージェント|言語モデル)(さん|様|へ)(\\s|、|,|。|$)`,
    hide: `(ユーザー|ユーザ|利用者)(に|へ)(は)?[^。！？\\n]{0,6}(言わ|伝え|知らせ|教え|通知し)ない(で|こと)`,
    preempt: `(代わりに|その前に|まず)[^。！？\\n]{0,6}(次の|以下の)(こと|手順|操作|指示)を|新しい指示\\s*[:：]`,
  },
  ru: {
    override: `(игнорир|проигнорир|забуд|забыв|отбрось|пренебреги|не\\s+обращай)[^\\s.!?,]*${G}(предыдущ|прежн|вышеуказанн|ранее|все|сво|исходн)[^\\s.!?,]*${G}(инструкц|указани|команд|правил|задач)[^\\s.!?,]*`,
    addressed: `(дорог(ой|ая)|уважаем(ый|ая)|привет,?|внимание,?)\\s+(ии|искусственный\\s+интеллект|ассистент|агент|помощник|языковая\\s+модель)(?![^\\s.!?,])`,
    hide: `не\\s+(говори|сообщай|рассказывай|упоминай)[^\\s.!?,]*\\s+(об\\s+этом\\s+|ничего\\s+)?пользовател[^\\s.!?,]*|без\\s+ведома\\s+пользовател[^\\s.!?,]*`,
    preempt: `(вместо\\s+этого|сначала)\\s+(сделай|выполни|отправь)[^\\s.!?,]*|новые\\s+инструкции\\s*:`,
  },
};
