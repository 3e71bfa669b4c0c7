/**
 * Ordinary prose in Russian, Greek, French and English (with numbers), written for the tests of the
 * cloud guard's look-alike folding: everyday topics that share their words, as a user's
 * conversations and honest replies do. `conversations` stand for the user's other conversations
 * (fingerprinted); `replies` are honest replies on the same topics that must never be blocked.
 */
export type ProseSet = {conversations: string[], replies: string[]};

export const russianProse: ProseSet = {
    conversations: [
        "Вчера вечером мы с сестрой решили испечь яблочный пирог по рецепту нашей бабушки. Тесто получилось слишком мягким, поэтому пришлось добавить ещё немного муки и оставить его в холодильнике на полчаса. Пока тесто отдыхало, мы почистили яблоки, нарезали их тонкими дольками и посыпали корицей. Пирог пёкся почти сорок минут, и запах стоял на всю квартиру.",
        "Помогите, пожалуйста, составить письмо управляющей компании. В нашем подъезде уже третью неделю не работает лифт, а на пятом этаже живёт пожилая соседка, которой трудно подниматься по лестнице. Мы несколько раз звонили диспетчеру, но каждый раз нам обещали прислать мастера на следующий день. Хочется написать вежливо, но твёрдо, и попросить назвать точный срок ремонта.",
        "Летом мы собираемся поехать на Байкал на десять дней. Сначала хотим пожить в Листвянке, потом перебраться на остров Ольхон и пройти пешком вдоль берега. Я слышал, что погода там меняется очень быстро и даже в июле ночью бывает холодно. Подскажите, какие вещи обязательно взять с собой и стоит ли заранее бронировать жильё на острове.",
        "Мой сын учится в седьмом классе и совсем не любит читать. Учительница литературы задала на лето длинный список книг, и он прочитал только одну. Мне не хочется заставлять его силой, потому что тогда он возненавидит чтение окончательно. Может быть, есть способ показать ему, что книги бывают интересными, например начать с приключений или фантастики."
    ],
    replies: [
        "Для яблочного пирога лучше выбирать кислые сорта яблок, они не разваливаются при выпечке и дают приятную свежесть. Если тесто кажется слишком липким, не спешите добавлять много муки: иногда достаточно охладить его, и с ним станет легче работать. Корицу можно смешать с сахаром заранее, тогда она распределится равномерно. Готовность удобно проверять деревянной шпажкой.",
        "Вот вариант письма. Уважаемые сотрудники управляющей компании! Обращаемся к вам по поводу неисправного лифта в нашем доме. Лифт не работает уже длительное время, и это создаёт серьёзные трудности для жильцов, особенно для пожилых людей и семей с маленькими детьми. Просим сообщить, когда будет выполнен ремонт, и назначить ответственного за его проведение. Заранее благодарим за ответ.",
        "На Байкале действительно стоит готовиться к резким переменам погоды. Возьмите тёплую кофту, непромокаемую куртку и удобную обувь для долгих прогулок по камням. Солнце у воды бывает очень ярким, поэтому пригодятся очки и крем. На Ольхоне летом много туристов, так что жильё разумно забронировать заранее, особенно если вы планируете приехать в выходные.",
        "Многие подростки начинают читать, когда находят книгу, которая совпадает с их собственными интересами. Попробуйте вместе сходить в библиотеку или книжный магазин и дать сыну самому выбрать несколько книг, даже если они не из школьного списка. Хорошо работают аудиокниги в дороге и совместное обсуждение прочитанного без оценок. Главное, чтобы чтение не превращалось в наказание."
    ]
};

export const greekProse: ProseSet = {
    conversations: [
        "Την περασμένη Κυριακή πήγαμε με τους φίλους μας για μπάνιο σε μια μικρή παραλία κοντά στο χωριό. Το νερό ήταν καθαρό και ζεστό, αλλά το απόγευμα σηκώθηκε δυνατός αέρας και αποφασίσαμε να φύγουμε νωρίτερα. Στον δρόμο της επιστροφής σταματήσαμε σε μια ταβέρνα και φάγαμε φρέσκο ψάρι με χωριάτικη σαλάτα.",
        "Θέλω να μάθω να μαγειρεύω γεμιστά όπως τα έφτιαχνε η γιαγιά μου. Θυμάμαι ότι έβαζε πολύ δυόσμο και λίγο μαϊντανό στο ρύζι, και ότι έψηνε τις ντομάτες και τις πιπεριές μαζί με πατάτες στο ίδιο ταψί. Δεν ξέρω όμως πόση ώρα πρέπει να μείνουν στον φούρνο και σε ποια θερμοκρασία.",
        "Ο γιος μου ξεκινάει φέτος το δημοτικό σχολείο και είναι λίγο φοβισμένος. Δεν γνωρίζει κανένα από τα παιδιά της τάξης του, γιατί μετακομίσαμε στην πόλη μόλις τον Ιούνιο. Σκέφτομαι να τον πάω μερικές φορές στην παιδική χαρά της γειτονιάς, για να γνωρίσει άλλα παιδιά πριν αρχίσουν τα μαθήματα.",
        "Το διαμέρισμα που νοικιάζουμε έχει υγρασία στον τοίχο της κρεβατοκάμαρας και κάθε χειμώνα εμφανίζεται μούχλα στη γωνία. Ο ιδιοκτήτης λέει ότι φταίει ο κακός αερισμός, αλλά εμείς ανοίγουμε τα παράθυρα κάθε πρωί. Θα ήθελα να του γράψω ένα ευγενικό μήνυμα και να του ζητήσω να έρθει κάποιος τεχνικός να το δει."
    ],
    replies: [
        "Για τα γεμιστά, ο φούρνος θέλει συνήθως γύρω στους εκατόν ογδόντα βαθμούς και περίπου μιάμιση ώρα, ανάλογα με το μέγεθος των λαχανικών. Καλό είναι να σκεπάσετε το ταψί με αλουμινόχαρτο την πρώτη ώρα και να το βγάλετε στο τέλος, για να ροδίσουν. Αν το ρύζι μείνει σκληρό, προσθέστε λίγο ζεστό νερό.",
        "Είναι φυσικό ένα παιδί να αγχώνεται πριν από την πρώτη μέρα στο σχολείο, ειδικά σε μια καινούργια πόλη. Μιλήστε του για το τι θα κάνει εκεί, διαβάστε μαζί ένα βιβλίο για το σχολείο και, αν γίνεται, επισκεφθείτε το κτίριο πριν αρχίσουν τα μαθήματα. Οι συναντήσεις στην παιδική χαρά είναι πολύ καλή ιδέα.",
        "Η υγρασία στους τοίχους δεν οφείλεται πάντα στον αερισμό. Μπορεί να υπάρχει πρόβλημα στη μόνωση, στις σωληνώσεις ή στην ταράτσα. Στο μήνυμά σας περιγράψτε με ευγένεια τι παρατηρείτε, πότε εμφανίζεται η μούχλα και τι κάνετε ήδη για να την αποφύγετε, και ζητήστε να οριστεί μια συγκεκριμένη μέρα για τον έλεγχο.",
        "Οι μικρές παραλίες κοντά στα χωριά είναι συχνά πιο ήσυχες από τις οργανωμένες, αλλά χρειάζεται προσοχή όταν φυσάει. Πριν ξεκινήσετε, δείτε την πρόγνωση του καιρού για τον άνεμο και τα κύματα. Πάρτε μαζί σας νερό, καπέλο και αντηλιακό, και προτιμήστε να κολυμπάτε κοντά στην ακτή."
    ]
};

export const frenchProse: ProseSet = {
    conversations: [
        "Samedi dernier, nous avons fait une longue promenade à vélo le long du canal, depuis la gare jusqu'au petit village où habite ma tante. Il faisait beau le matin, mais vers midi le ciel s'est couvert et nous avons dû nous abriter sous un pont pendant une averse. Ma tante nous a ensuite servi une soupe de légumes et une tarte aux prunes.",
        "Je dois écrire une lettre à mon propriétaire, car le chauffe-eau de l'appartement ne fonctionne plus depuis une semaine. J'ai déjà appelé le plombier qu'il m'avait recommandé, mais il ne peut pas venir avant la fin du mois. Je voudrais demander poliment une solution plus rapide, ou au moins une réduction du loyer pour ce mois-ci.",
        "Ma fille commence le lycée en septembre et elle hésite encore entre l'allemand et l'espagnol comme deuxième langue. Elle aime beaucoup la musique et les films espagnols, mais son père pense que l'allemand lui sera plus utile pour trouver du travail plus tard. J'aimerais l'aider à choisir sans lui imposer notre avis.",
        "Nous organisons un repas pour les quatre-vingts ans de mon grand-père et nous serons une vingtaine à table. Il adore le poisson, mais plusieurs cousins sont végétariens et ma belle-sœur ne mange pas de gluten. Je cherche un menu simple à préparer la veille, qui plaise à tout le monde sans passer toute la journée en cuisine."
    ],
    replies: [
        "Pour un repas de vingt personnes avec des régimes différents, le plus simple est de prévoir plusieurs plats que chacun peut composer à sa façon. Un grand plat de poisson au four, un gratin de légumes sans farine et une salade de lentilles se préparent facilement la veille. Pour le dessert, une salade de fruits ou un gâteau au chocolat sans farine conviendra à tous.",
        "Dans votre lettre, rappelez la date de la panne, les démarches que vous avez déjà faites et les conséquences au quotidien. Restez courtois, mais précisez que l'eau chaude fait partie des équipements qu'un logement doit fournir. Vous pouvez proposer deux ou trois dates pour l'intervention et demander une réponse écrite dans un délai raisonnable.",
        "Le choix d'une deuxième langue devrait surtout tenir compte de la motivation de votre fille. Une langue que l'on aime s'apprend plus vite, et l'espagnol comme l'allemand peuvent être utiles dans de nombreux métiers. Elle pourrait assister à un cours de chaque langue, parler avec des élèves plus âgés et décider ensuite en connaissance de cause.",
        "Les balades à vélo le long des canaux sont agréables parce que le chemin est plat et souvent ombragé. Pensez tout de même à consulter la météo avant de partir, à emporter un imperméable léger et de quoi réparer une crevaison. Les petits villages au bord de l'eau ont souvent un café où l'on peut faire une pause."
    ]
};

export const englishProseWithNumbers: ProseSet = {
    conversations: [
        "Our flat costs 1,450 euros a month, and the heating adds about 120 euros from November to March. We moved in on 3 May 2024 with a deposit of 2,900 euros, two months' rent. The landlord wants a 4.5% increase from next January, which would bring the rent to 1,515 euros. Is that allowed under a contract signed for 36 months?",
        "I ran 5 km in 27 minutes 40 seconds last Saturday, my best time so far. My plan is to get under 25 minutes by the end of September, training 3 times a week: one interval session of 6 x 400 m, one easy 8 km run and one long run of 12 to 14 km. I am 41 years old and weigh 78 kg.",
        "The quarterly report shows revenue of 2.3 million for Q2, up 8% on Q1, while costs rose from 1.7 to 1.9 million. We hired 14 people, mostly in support, and closed the office on Elm Road at the end of June. Please turn this into 5 bullet points for the board meeting on 18 July at 10:30."
    ],
    replies: [
        "A rent increase of 4.5% on 1,450 euros is 65.25 euros, so the new rent would be 1,515.25 euros a month. Whether it is allowed depends on the clause in your contract: many fixed-term contracts of 36 months only permit one indexation a year, tied to a published index. Check the index named in the contract and the date of the last increase, if any.",
        "Going from 27:40 to under 25:00 for 5 km means about 32 seconds faster per kilometre, which is realistic in 4 to 5 months at 3 sessions a week. Keep the long run easy, add 1 or 2 repetitions to the intervals every 2 weeks, and take a lighter week every fourth week. Sleep 7 to 8 hours and run a test 5 km every 6 weeks.",
        "Here are 5 points for the board: revenue of 2.3 million in Q2, 8% more than Q1; costs up from 1.7 to 1.9 million, mainly salaries; 14 new hires, most of them in customer support; the Elm Road office closed on 30 June; and the outlook for Q3, to be discussed at the meeting on 18 July at 10:30."
    ]
};

export const allProse = {russian: russianProse, greek: greekProse, french: frenchProse, "english with numbers": englishProseWithNumbers};
